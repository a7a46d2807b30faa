// The conformance suite every usage backend runs against the real store: writes events the way
// the observer does (batches, in finish order), then reads them back with every filter, pages
// with cursors (while writes go on), and checks summary and timeseries against a reference
// computed here by hand.
import type { Test } from 'tap';
import type { UsageEvent } from '../../core/hooks.ts';
import type { ListQuery, SessionSummary, StatusFilter, Summary, TimeseriesPoint, UsageBackend, UsageFilter, UsageTotals } from '../../core/observer/types.ts';
import { usageEvent } from './observer-fixtures.ts';

export interface UsageBackendHarness {
  backend: UsageBackend;
  cleanup(): Promise<void>;
}

const STATUSES = [200, 200, 200, 400, 429, 500, 201, 404, 503];

/** 60 events over about three hours ending in the past hour, in finish order. */
export function makeEvents(baseMs: number, count = 60, tag = 'e'): UsageEvent[] {
  const events: UsageEvent[] = [];
  for (let i = 0; i < count; i++) {
    // Two events share a start time, to test the request_id tie-break.
    const started = baseMs + (i === 31 ? 30 : i) * 180_000 + (i % 7) * 1000 + (i % 3) * 7;
    const latency = ((i * 37) % 200) * 1000 + 15;
    events.push(usageEvent({
      request_id: `${tag}-${String(i).padStart(3, '0')}-${(i * 7919) % 1000}`,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(started + latency).toISOString(),
      latency_ms: latency,
      ttfb_ms: i % 4 === 0 ? null : 12.5,
      policy_id: i % 10 === 9 ? null : `policy-${i % 3}`,
      relay_key_id: `key-${i % 4}`,
      relay_key_prefix: `rk_${i % 4}`,
      model_id: i % 11 === 0 ? null : `model-${i % 5}`,
      model_slug: i % 11 === 0 ? null : `slug-${i % 5}`,
      model_requested: `asked-${i % 5}`,
      status: STATUSES[i % STATUSES.length],
      error_code: STATUSES[i % STATUSES.length] >= 400 ? 'RELAY_ERR_UPSTREAM_BAD_RESPONSE' : null,
      stream: i % 2 === 0,
      input_tokens: 100 + i * 13,
      output_tokens: 7 * i,
      cache_read_tokens: i % 5 === 0 ? 50 : 0,
      cache_write_tokens: i % 6 === 0 ? 20 : 0,
      reasoning_tokens: i % 8,
      cost: i % 9 === 0 ? null : Math.round(i * 0.00137 * 1e6) / 1e6,
      // Some priced in EUR (a model priced in another currency): a currency filter keeps them out.
      currency: i % 9 === 0 ? null : i % 5 === 2 ? 'EUR' : 'USD',
      attempts: 1 + (i % 3),
      client_aborted: i % 13 === 0,
      client: i % 6 === 1 ? 'codex' : null,
      extras: {
        ...(i % 6 === 1 ? { 'session-id': `s-${i}`, originator: 'codex_cli_rs', 'note': 'ünïcødé "quoted"' } : {}),
        // Agent sessions: Codex threads, Claude Code sessions, and an empty thread-id that falls through to the latter.
        ...(i % 4 === 1 ? { 'thread-id': `thread-${i % 3}` } : {}),
        ...(i % 4 === 3 ? { 'x-claude-code-session-id': `cc-${i % 8 === 3 ? 'a' : 'b'}` } : {}),
        ...(i === 7 ? { 'thread-id': '' } : {}),
      },
      client_request_id: i % 4 === 0 ? `client-${i}` : null,
      upstream_request_id: i % 3 === 0 ? `req_${i}` : null,
    }));
  }
  return events.sort((a, b) => Date.parse(a.finished_at) - Date.parse(b.finished_at));
}

function newestFirst(a: UsageEvent, b: UsageEvent): number {
  const d = Date.parse(b.started_at) - Date.parse(a.started_at);
  return d !== 0 ? d : a.request_id < b.request_id ? 1 : a.request_id > b.request_id ? -1 : 0;
}

function statusOk(status: number, filters: StatusFilter[] | undefined): boolean {
  return (filters ?? []).every(({ op, value }) =>
    op === 'eq' ? status === value : op === 'gte' ? status >= value : op === 'gt' ? status > value : op === 'lt' ? status < value : status <= value);
}

/** Written out here, not imported: Codex's thread-id, else Claude Code's session id; '' is none. */
function sessionOf(e: UsageEvent): string | null {
  return e.extras['thread-id'] || e.extras['x-claude-code-session-id'] || null;
}

function reference(events: UsageEvent[], f: UsageFilter): UsageEvent[] {
  return events.filter((e) =>
    (f.policyId === undefined || e.policy_id === f.policyId)
    && (f.relayKeyId === undefined || e.relay_key_id === f.relayKeyId)
    && (f.modelId === undefined || e.model_id === f.modelId)
    && (f.sessionId === undefined || sessionOf(e) === f.sessionId)
    && (f.currency === undefined || e.currency === f.currency)
    && statusOk(e.status, f.status)
    && (!f.from || Date.parse(e.started_at) >= f.from.getTime())
    && (!f.to || Date.parse(e.started_at) < f.to.getTime())).sort(newestFirst);
}

function totalsOf(events: UsageEvent[]): UsageTotals {
  return {
    requests: events.length,
    errors: events.filter((e) => e.status >= 400).length,
    input_tokens: events.reduce((n, e) => n + e.input_tokens, 0),
    output_tokens: events.reduce((n, e) => n + e.output_tokens, 0),
    cache_read_tokens: events.reduce((n, e) => n + e.cache_read_tokens, 0),
    cache_write_tokens: events.reduce((n, e) => n + e.cache_write_tokens, 0),
    reasoning_tokens: events.reduce((n, e) => n + e.reasoning_tokens, 0),
    // Money is exact in micro-units: the expected sum has no float noise (0.1 + 0.2 is 0.3).
    cost: events.reduce((n, e) => n + Math.round((e.cost ?? 0) * 1e6), 0) / 1e6,
  };
}

function sameTotals(t: Test, actual: UsageTotals | undefined, expected: UsageTotals, msg: string): void {
  t.ok(actual, `${msg}: present`);
  if (!actual) return;
  t.same(actual, expected, msg);
  t.equal(String(actual.cost), String(expected.cost), `${msg}: cost ${actual.cost} shows no float noise`);
}

async function listAll(backend: UsageBackend, query: Omit<ListQuery, 'limit' | 'cursor'>, limit: number): Promise<UsageEvent[]> {
  const out: UsageEvent[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await backend.list!({ ...query, limit, cursor });
    out.push(...page.items);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
  throw new Error('paging did not end');
}

const ids = (events: UsageEvent[]) => events.map((e) => e.request_id);

/** A session is a relay key's: what tells two apart is the key and the session id. */
const identityOf = (relayKeyId: string | null, sessionId: string) => `${relayKeyId ?? '(no key)'} ${sessionId}`;
const identity = (s: SessionSummary) => identityOf(s.relay_key_id, s.session_id);

/** Relay key ids in order, no key last (SQL's ascending order). */
const byKey = (a: SessionSummary, b: SessionSummary) =>
  a.relay_key_id === b.relay_key_id ? 0 : a.relay_key_id === null ? 1 : b.relay_key_id === null ? -1 : a.relay_key_id.localeCompare(b.relay_key_id);

export interface SuiteOptions {
  /** Batch size of the writes (as the queue would make them). */
  batchSize?: number;
}

export function usageBackendSuite(t: Test, open: () => Promise<UsageBackendHarness>, options: SuiteOptions = {}): void {
  const hourMs = 3_600_000;
  const base = Math.floor((Date.now() - 4 * hourMs) / hourMs) * hourMs;
  const events = makeEvents(base);
  let harness: UsageBackendHarness;
  let backend: UsageBackend;

  t.before(async () => {
    harness = await open();
    backend = harness.backend;
    const size = options.batchSize ?? 13;
    for (let i = 0; i < events.length; i += size) await backend.write(events.slice(i, i + size));
  });
  t.teardown(async () => {
    await harness?.cleanup();
  });

  t.test('list returns every event newest first, unchanged', async (t) => {
    const page = await backend.list!({ limit: 500 });
    const expected = reference(events, {});
    t.same(ids(page.items), ids(expected), 'newest first by started_at, then request_id');
    t.same(page.items, expected, 'every field round-trips');
    t.equal(page.nextCursor, null);
  });

  t.test('cursor paging: no repeats, no gaps, stable under concurrent writes', async (t) => {
    const expected = ids(reference(events, {}));
    const seen: string[] = [];
    const late = makeEvents(Date.now() - 60_000, 6, 'late').map((e) => ({ ...e, started_at: new Date(Date.now() - 30_000).toISOString(), finished_at: new Date().toISOString() }));
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await backend.list!({ limit: 7, cursor });
      t.ok(page.items.length <= 7);
      seen.push(...ids(page.items));
      // Newer events arrive between pages; they must not shift the pages.
      if (pages < late.length) await backend.write([late[pages]]);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    t.same(seen, expected, 'pages concatenate to the full list');
    const all = await backend.list!({ limit: 500 });
    t.equal(all.items.length, events.length + late.length, 'the late events are there on a fresh first page');
    t.same(ids(all.items.slice(0, late.length)).sort(), ids(late).sort(), 'and come first');
    for (const e of late) events.push(e);
  });

  t.test('every filter', async (t) => {
    const windowFrom = new Date(base + hourMs);
    const windowTo = new Date(base + 2 * hourMs);
    const filters: Array<[string, UsageFilter]> = [
      ['policyId', { policyId: 'policy-1' }],
      ['relayKeyId', { relayKeyId: 'key-2' }],
      ['modelId', { modelId: 'model-3' }],
      ['status 200', { status: [{ op: 'eq', value: 200 }] }],
      ['status >=400', { status: [{ op: 'gte', value: 400 }] }],
      ['status >400', { status: [{ op: 'gt', value: 400 }] }],
      ['status <500', { status: [{ op: 'lt', value: 500 }] }],
      ['status <=429', { status: [{ op: 'lte', value: 429 }] }],
      ['status 4xx', { status: [{ op: 'gte', value: 400 }, { op: 'lt', value: 500 }] }],
      ['from', { from: windowFrom }],
      ['to', { to: windowTo }],
      ['from and to', { from: windowFrom, to: windowTo }],
      ['combined', { policyId: 'policy-0', status: [{ op: 'gte', value: 400 }], from: new Date(base) }],
      ['currency USD', { currency: 'USD' }],
      ['currency EUR', { currency: 'EUR' }],
      ['currency and relayKeyId', { currency: 'EUR', relayKeyId: 'key-3' }],
      ['currency with no events', { currency: 'JPY' }],
      ['no match', { policyId: 'no-such-policy' }],
    ];
    for (const [name, filter] of filters) {
      const expected = ids(reference(events, filter));
      t.same(ids((await backend.list!({ ...filter, limit: 500 })).items), expected, `${name} (${expected.length})`);
      t.same(ids(await listAll(backend, filter, 5)), expected, `${name}, paged`);
    }
  });

  t.test('get by request id', async (t) => {
    const some = events[17];
    t.same(await backend.get!(some.request_id), some);
    t.equal(await backend.get!('no-such-request'), null);
  });

  t.test('summary over a window, overall and grouped', async (t) => {
    const from = new Date(base);
    const inWindow = reference(events, { from });
    const overall: Summary = await backend.summary!({ from });
    sameTotals(t, overall.totals, totalsOf(inWindow), 'overall');
    t.equal(overall.groups, undefined, 'no groups unless asked');
    const keyOf = {
      model: (e: UsageEvent) => e.model_id,
      relay_key: (e: UsageEvent) => e.relay_key_id,
      policy: (e: UsageEvent) => e.policy_id,
      status: (e: UsageEvent) => String(e.status),
      // A budget's reconcile: its currency's cost from the group, the tokens of every currency from the totals.
      currency: (e: UsageEvent) => e.currency,
    };
    for (const groupBy of ['model', 'relay_key', 'policy', 'status', 'currency'] as const) {
      const summary = await backend.summary!({ from, groupBy });
      sameTotals(t, summary.totals, totalsOf(inWindow), `${groupBy}: overall`);
      const expectedKeys = [...new Set(inWindow.map(keyOf[groupBy]))];
      t.same((summary.groups ?? []).map((g) => g.key).sort(), expectedKeys.sort(), `${groupBy}: group keys`);
      for (const key of expectedKeys) {
        const group = summary.groups?.find((g) => g.key === key);
        sameTotals(t, group?.totals, totalsOf(inWindow.filter((e) => keyOf[groupBy](e) === key)), `${groupBy}=${key}`);
      }
    }
    const errors = await backend.summary!({ from, status: [{ op: 'gte', value: 400 }], relayKeyId: 'key-1' });
    sameTotals(t, errors.totals, totalsOf(reference(events, { from, status: [{ op: 'gte', value: 400 }], relayKeyId: 'key-1' })), 'filtered');
    for (const currency of ['USD', 'EUR']) {
      const inCurrency = reference(events, { from, currency });
      t.ok(inCurrency.length > 0 && inCurrency.length < inWindow.length - 5, `${currency}: some events, not all`);
      const expected = totalsOf(inCurrency);
      t.ok(expected.cost > 0 && expected.cost < totalsOf(inWindow).cost, `${currency}: part of the cost`);
      sameTotals(t, (await backend.summary!({ from, currency })).totals, expected, `currency ${currency}: only its cost`);
      const byKey = await backend.summary!({ from, currency, groupBy: 'relay_key' });
      sameTotals(t, byKey.totals, expected, `currency ${currency}, grouped: overall`);
      for (const key of ['key-0', 'key-1', 'key-2', 'key-3']) {
        sameTotals(t, byKey.groups?.find((g) => g.key === key)?.totals ?? totalsOf([]), totalsOf(inCurrency.filter((e) => e.relay_key_id === key)), `currency ${currency}, relay_key=${key}`);
      }
    }
    const empty = await backend.summary!({ policyId: 'no-such-policy' });
    sameTotals(t, empty.totals, totalsOf([]), 'empty');
  });

  t.test('agent sessions: grouped by Codex thread or Claude Code session, sorted, filtered, cut', async (t) => {
    const from = new Date(base);
    const inWindow = reference(events, { from });
    const bySession = new Map<string, UsageEvent[]>();
    for (const e of inWindow) {
      const id = sessionOf(e);
      if (id !== null) bySession.set(identityOf(e.relay_key_id, id), [...(bySession.get(identityOf(e.relay_key_id, id)) ?? []), e]);
    }
    t.ok(bySession.size >= 4, 'the fixture has several sessions');
    const sessions = await backend.sessions!({ from, limit: 100 });
    t.same(sessions.map(identity).sort(), [...bySession.keys()].sort(), 'one entry per session');
    let mixed = 0;
    for (const s of sessions) {
      const mine = bySession.get(identity(s)) ?? [];
      t.equal(s.relay_key_prefix, mine[0]?.relay_key_prefix, `${s.session_id}: its relay key's prefix`);
      const first = Math.min(...mine.map((e) => Date.parse(e.started_at)));
      const last = Math.max(...mine.map((e) => Date.parse(e.finished_at)));
      const totals = totalsOf(mine);
      sameTotals(t, s.totals, totals, `${s.session_id}: totals`);
      t.equal(s.turns, mine.length, `${s.session_id}: turns`);
      t.same(s.models, [...new Set(mine.map((e) => e.model_slug ?? e.model_requested))].sort(), `${s.session_id}: models`);
      t.same(s.currencies, [...new Set(mine.flatMap((e) => (e.currency === null ? [] : [e.currency])))].sort(), `${s.session_id}: currencies`);
      if (s.currencies.length > 1) {
        mixed += 1;
        const expected = s.currencies.map((currency) => ({ currency, cost: totalsOf(mine.filter((e) => e.currency === currency)).cost })).sort((a, b) => b.cost - a.cost);
        t.same(s.costs, expected, `${s.session_id}: its cost in each currency, the costliest first`);
      } else {
        t.equal(s.costs, undefined, `${s.session_id}: in one currency, no split`);
      }
      t.equal(s.first_started_at, new Date(first).toISOString(), `${s.session_id}: first start`);
      t.equal(s.last_finished_at, new Date(last).toISOString(), `${s.session_id}: last finish`);
      t.equal(s.duration_ms, last - first, `${s.session_id}: duration`);
      t.equal(s.cache_hit_ratio, Math.round((totals.cache_read_tokens / totals.input_tokens) * 10_000) / 10_000, `${s.session_id}: cache hit ratio`);
      t.equal(s.client, mine.find((e) => e.client !== null)?.client ?? null, `${s.session_id}: client`);
    }
    t.ok(mixed > 0, 'the fixture has a session priced in two currencies');
    const then = (a: SessionSummary, b: SessionSummary) => b.last_finished_at.localeCompare(a.last_finished_at) || a.session_id.localeCompare(b.session_id) || byKey(a, b);
    // Priced in EUR and USD: costs do not compare, so "costliest" is by tokens (which here is not the order of the cost sums).
    const tokens = (s: SessionSummary) => s.totals.input_tokens + s.totals.output_tokens;
    const costliest = [...sessions].sort((a, b) => tokens(b) - tokens(a) || then(a, b));
    const byCostSum = [...sessions].sort((a, b) => b.totals.cost - a.totals.cost || then(a, b));
    t.notSame(costliest.map(identity), byCostSum.map(identity), 'the fixture tells the two orders apart');
    t.same(sessions.map(identity), costliest.map(identity), 'in two currencies, the most tokens first');
    const usd = await backend.sessions!({ from, limit: 100, currency: 'USD' });
    t.ok(usd.length >= 4 && usd.every((s) => s.currencies.join() === 'USD'), 'the USD requests only');
    t.same(usd.map(identity), [...usd].sort((a, b) => b.totals.cost - a.totals.cost || then(a, b)).map(identity), 'in one currency, the costliest first');
    const recent = await backend.sessions!({ from, limit: 100, sort: 'recent' });
    t.same(recent.map((s) => s.last_finished_at), [...recent.map((s) => s.last_finished_at)].sort().reverse(), 'recent: the last active first');
    t.same((await backend.sessions!({ from, limit: 2 })).map(identity), costliest.slice(0, 2).map(identity), 'cut to the limit');
    const oneModel = await backend.sessions!({ from, limit: 100, modelId: 'model-1' });
    t.same(oneModel.map((s) => s.turns).reduce((a, b) => a + b, 0), inWindow.filter((e) => e.model_id === 'model-1' && sessionOf(e) !== null).length, 'filters apply to the turns counted');
    for (const id of ['thread-1', 'cc-a']) {
      const expected = ids(reference(events, { sessionId: id }));
      t.same(ids((await backend.list!({ sessionId: id, limit: 500 })).items), expected, `list by session ${id} (${expected.length})`);
    }
    t.same((await backend.list!({ sessionId: 'no-such-session', limit: 10 })).items, [], 'an unknown session has no requests');
  });

  t.test('agent sessions are per relay key: two keys sending one session id make two sessions', async (t) => {
    const from = new Date(base);
    const at = base + 90 * 60_000;
    // key-b's turn and a keyless one (a refused request) cost what key-a's two do and end when they do: the order of the tie is the backend's.
    const turn = (n: number, relay_key_id: string | null, tokens: number, cost: number, started: number) => usageEvent({
      request_id: `shared-${n}`, relay_key_id, relay_key_prefix: relay_key_id === null ? null : `rk_${relay_key_id}`, policy_id: relay_key_id === null ? null : `policy-of-${relay_key_id}`,
      started_at: new Date(started).toISOString(), finished_at: new Date(at + 5_000).toISOString(), latency_ms: at + 5_000 - started,
      input_tokens: tokens, output_tokens: 0, cache_read_tokens: 0, cost, currency: 'USD', client: 'codex', extras: { 'thread-id': 'victim-thread-777' },
    });
    const shared = [turn(1, 'key-b', 200, 0.02, at), turn(2, null, 200, 0.02, at + 1_000), turn(3, 'key-a', 100, 0.01, at + 2_000), turn(4, 'key-a', 100, 0.01, at + 3_000)];
    await backend.write(shared);
    events.push(...shared);
    const sessions = (await backend.sessions!({ from, limit: 100 })).filter((s) => s.session_id === 'victim-thread-777');
    t.same(sessions.map((s) => [s.relay_key_id, s.relay_key_prefix, s.turns, s.totals.cost]), [['key-a', 'rk_key-a', 2, 0.02], ['key-b', 'rk_key-b', 1, 0.02], [null, null, 1, 0.02]],
      'one session per key, each with its own turns and cost; equal cost and time: by relay key id, no key last');
    const recent = (await backend.sessions!({ from, limit: 100, sort: 'recent' })).filter((s) => s.session_id === 'victim-thread-777');
    t.same(recent.map((s) => s.relay_key_id), ['key-a', 'key-b', null], 'the same tie-break when the last active come first');
    const ofId = await backend.sessions!({ sessionId: 'victim-thread-777', limit: 10 });
    t.same(ofId.map((s) => s.relay_key_id), ['key-a', 'key-b', null], 'by session id: each key\'s session');
    const [a, ...none] = await backend.sessions!({ sessionId: 'victim-thread-777', relayKeyId: 'key-a', limit: 10 });
    t.same(none, [], 'with the relay key: that key\'s session only');
    t.match(a, { relay_key_id: 'key-a', turns: 2, first_started_at: new Date(at + 2_000).toISOString(), totals: { requests: 2, input_tokens: 200, cost: 0.02 } });
    t.same(ids((await backend.list!({ sessionId: 'victim-thread-777', relayKeyId: 'key-a', limit: 10 })).items), ['shared-4', 'shared-3'], 'its turns, without the other key\'s');
    t.same(ids((await backend.list!({ sessionId: 'victim-thread-777', limit: 10 })).items), ['shared-4', 'shared-3', 'shared-2', 'shared-1'], 'without a key: every turn with the id');
  });

  t.test('timeseries in buckets, overall and grouped', async (t) => {
    const from = new Date(base);
    for (const bucketSeconds of [900, 3600]) {
      const points: TimeseriesPoint[] = await backend.timeseries!({ from, bucketSeconds });
      const inWindow = reference(events, { from });
      const buckets = new Map<number, UsageEvent[]>();
      for (const e of inWindow) {
        const b = Math.floor(Date.parse(e.started_at) / (bucketSeconds * 1000)) * bucketSeconds * 1000;
        buckets.set(b, [...(buckets.get(b) ?? []), e]);
      }
      const expectedTimes = [...buckets.keys()].sort((a, b) => a - b).map((b) => new Date(b).toISOString());
      t.same(points.map((p) => p.t), expectedTimes, `${bucketSeconds}s: bucket starts, in order`);
      for (const p of points) sameTotals(t, p.totals, totalsOf(buckets.get(Date.parse(p.t)) ?? []), `${bucketSeconds}s bucket ${p.t}`);
    }
    const grouped = await backend.timeseries!({ from, bucketSeconds: 3600, groupBy: 'model', status: [{ op: 'lt', value: 400 }] });
    const inWindow = reference(events, { from, status: [{ op: 'lt', value: 400 }] });
    const expected = new Map<string, UsageEvent[]>();
    for (const e of inWindow) {
      const id = `${new Date(Math.floor(Date.parse(e.started_at) / 3_600_000) * 3_600_000).toISOString()}|${e.model_id}`;
      expected.set(id, [...(expected.get(id) ?? []), e]);
    }
    t.same(grouped.map((p) => `${p.t}|${p.key}`).sort(), [...expected.keys()].sort(), 'grouped: one point per bucket and model');
    for (const p of grouped) sameTotals(t, p.totals, totalsOf(expected.get(`${p.t}|${p.key}`) ?? []), `grouped ${p.t} ${p.key}`);
    t.ok(grouped.every((p) => 'key' in p), 'grouped points carry their key');
  });
}
