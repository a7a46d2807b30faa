// The logs and usage routes on a bare Fastify instance over a real backend (log-file on disk,
// payload-file), fed through the real observer.
import t from 'tap';
import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { registerLogRoutes } from '../../core/control/logs-routes.ts';
import { isRelayError } from '../../core/errors.ts';
import { createObserver } from '../../core/observer/observer.ts';
import type { UsageBackend } from '../../core/observer/types.ts';
import { FileUsageBackend } from '../../plugins/log-file/file-usage-backend.ts';
import { FilePayloadBackend } from '../../plugins/payload-file/file-payload-backend.ts';
import { makeEvents } from '../support/usage-backend-suite.ts';
import { sessionIdOf } from '../../core/observer/session-id.ts';
import { capturedPayload, silentLog, testSettings } from '../support/observer-fixtures.ts';

const dir = await mkdtemp(path.join(os.tmpdir(), 'relay-logs-routes-'));
const settings = testSettings({ 'payload-logging': { enabled: true, backend: 'file', maxBytes: 1 << 20, viewersReadPayloads: false } });
const observer = createObserver({ settings, log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
observer.addUsageBackend(new FileUsageBackend({ dir: path.join(dir, 'usage'), maxFileBytes: 1 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 1 << 30, orderSkewMs: 5000 }));
observer.addPayloadBackend(new FilePayloadBackend({ dir: path.join(dir, 'payloads'), retentionDays: 30 }));
const writeOnly: UsageBackend = { id: 'write-only', async write() {} };
observer.addUsageBackend(writeOnly);

const base = Math.floor((Date.now() - 4 * 3_600_000) / 3_600_000) * 3_600_000;
const events = makeEvents(base);
for (const e of events) observer.record(e, e.request_id === events[5].request_id ? capturedPayload(e.request_id, { request_truncated: true, request_body: '{"trunc' }) : null);
await observer.flush();

const app = Fastify();
await app.register(swagger, { openapi: { info: { title: 'test', version: '0' } } });
// Stands in for the control plane's error handler.
app.setErrorHandler((err, _req, reply) => {
  if (isRelayError(err)) return reply.status(err.status).send({ error: err.toBody() });
  return reply.status(500).send({ error: { message: String(err) } });
});
registerLogRoutes(app, observer);
await app.ready();
t.teardown(async () => {
  await app.close();
  await observer.close();
  await rm(dir, { recursive: true, force: true });
});

const get = async (url: string) => {
  const res = await app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() };
};
const newestFirst = [...events].sort((a, b) => Date.parse(b.started_at) - Date.parse(a.started_at) || (a.request_id < b.request_id ? 1 : -1));

t.test('GET /api/logs: newest first, limit default 50, cursor paging', async (t) => {
  const first = await get('/api/logs');
  t.equal(first.status, 200);
  t.equal(first.body.items.length, 50, 'default limit 50');
  t.same(first.body.items.map((e: { request_id: string }) => e.request_id), newestFirst.slice(0, 50).map((e) => e.request_id));
  const second = await get(`/api/logs?limit=50&cursor=${encodeURIComponent(first.body.nextCursor)}`);
  t.same(second.body.items.map((e: { request_id: string }) => e.request_id), newestFirst.slice(50).map((e) => e.request_id));
  t.equal(second.body.nextCursor, null);
  t.same(first.body.items[0], newestFirst[0], 'the response serializes every field');
});

t.test('filters on the query string', async (t) => {
  const errors = await get('/api/usage/events?status=%3E%3D400&limit=500');
  t.ok(errors.body.items.length > 0);
  t.ok(errors.body.items.every((e: { status: number }) => e.status >= 400));
  const fivexx = await get('/api/usage/events?status=5xx&limit=500');
  t.ok(fivexx.body.items.every((e: { status: number }) => e.status >= 500 && e.status < 600));
  const policy = await get('/api/usage/events?policyId=policy-1&modelId=model-2&limit=500');
  t.same(policy.body.items.map((e: { request_id: string }) => e.request_id),
    newestFirst.filter((e) => e.policy_id === 'policy-1' && e.model_id === 'model-2').map((e) => e.request_id));
  const window = await get(`/api/usage/events?from=${new Date(base + 3_600_000).toISOString()}&to=${new Date(base + 7_200_000).toISOString()}&limit=500`);
  t.same(window.body.items.length, events.filter((e) => Date.parse(e.started_at) >= base + 3_600_000 && Date.parse(e.started_at) < base + 7_200_000).length);
  const since = await get('/api/usage/events?since=1m');
  t.same(since.body.items, [], 'nothing in the last minute');
});

t.test('GET /api/logs/:requestId with and without a captured payload', async (t) => {
  const withPayload = await get(`/api/logs/${events[5].request_id}`);
  t.equal(withPayload.status, 200);
  t.equal(withPayload.body.request_id, events[5].request_id);
  t.equal(withPayload.body.request_body, '{"trunc');
  t.equal(withPayload.body.request_truncated, true);
  t.equal(withPayload.body.response_truncated, false);
  t.type(withPayload.body.response_body, 'string');
  const without = await get(`/api/logs/${events[6].request_id}`);
  t.equal(without.status, 200);
  t.notOk('request_body' in without.body, 'no payload fields when nothing was captured');
  const missing = await get('/api/logs/no-such-request');
  t.equal(missing.status, 404);
  t.equal(missing.body.error.code, 'RELAY_ERR_NOT_FOUND');
});

t.test('summary and timeseries', async (t) => {
  const summary = await get('/api/usage/summary?since=7d&groupBy=status');
  t.equal(summary.status, 200);
  t.equal(summary.body.totals.requests, events.length);
  t.equal(summary.body.groups.reduce((n: number, g: { totals: { requests: number } }) => n + g.totals.requests, 0), events.length);
  t.type(summary.body.from, 'string');
  const series = await get('/api/usage/timeseries?since=6h&bucket=1h');
  t.equal(series.status, 200);
  t.equal(series.body.bucketSeconds, 3600);
  t.ok(series.body.points.length >= 6 && series.body.points.length <= 7, 'one point per bucket, gaps filled');
  t.equal(series.body.points.reduce((n: number, p: { totals: { requests: number } }) => n + p.totals.requests, 0), events.length);
  const grouped = await get('/api/usage/timeseries?since=6h&bucket=30m&groupBy=model');
  t.ok(grouped.body.points.every((p: { key?: unknown }) => 'key' in p));
});

t.test('costs in more than one currency: per currency in the summary, one currency on request in a timeseries', async (t) => {
  const sumIn = (currency: string) => events.filter((e) => e.currency === currency).reduce((n, e) => n + (e.cost ?? 0), 0);
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  const summary = await get('/api/usage/summary?since=7d');
  t.equal(summary.status, 200);
  const costs = summary.body.costs as Array<{ currency: string; cost: number }>;
  t.same(costs.map((c) => c.currency), ['USD', 'EUR'], 'each currency priced in the window, the costliest first');
  t.ok(close(costs[0]!.cost, sumIn('USD')) && close(costs[1]!.cost, sumIn('EUR')), `USD ${costs[0]!.cost} and EUR ${costs[1]!.cost}, as the events say`);
  t.ok(close(summary.body.totals.cost, sumIn('USD') + sumIn('EUR')), 'totals.cost still adds them (documented)');

  const inEur = await get('/api/usage/timeseries?since=6h&bucket=1h&costCurrency=EUR');
  t.equal(inEur.status, 200);
  t.equal(inEur.body.costCurrency, 'EUR');
  const points = inEur.body.points as Array<{ totals: { requests: number; cost: number } }>;
  t.ok(close(points.reduce((n, p) => n + p.totals.cost, 0), sumIn('EUR')), 'the points\' cost is the EUR requests\' only');
  t.equal(points.reduce((n, p) => n + p.totals.requests, 0), events.length, 'their requests are every currency\'s');
  const grouped = await get('/api/usage/timeseries?since=6h&bucket=1h&groupBy=model&costCurrency=USD');
  const groupedCost = (grouped.body.points as Array<{ totals: { cost: number } }>).reduce((n, p) => n + p.totals.cost, 0);
  t.ok(close(groupedCost, sumIn('USD')), 'and per group');
  t.equal((await get('/api/usage/timeseries?since=6h')).body.costCurrency, null, 'not asked: costs added over every currency');
  const bad = await get('/api/usage/timeseries?costCurrency=euro');
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /costCurrency/, 'a malformed currency names the parameter');

  const single = await get('/api/usage/summary?since=7d&modelId=no-such-model');
  t.same(single.body.costs, [], 'no priced request: no currency');
});

t.test('a grouped summary priced in more than one currency: each group\'s cost per currency', async (t) => {
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  const summary = await get('/api/usage/summary?since=7d&groupBy=relay_key');
  t.equal(summary.status, 200);
  const groups = summary.body.groups as Array<{ key: string | null; totals: { cost: number }; costs: Array<{ currency: string; cost: number }> }>;
  let mixedGroups = 0;
  for (const g of groups) {
    const mine = events.filter((e) => e.relay_key_id === g.key);
    const expected = ['USD', 'EUR']
      .map((currency) => ({ currency, cost: mine.filter((e) => e.currency === currency).reduce((n, e) => n + (e.cost ?? 0), 0), priced: mine.some((e) => e.currency === currency) }))
      .filter((c) => c.priced).sort((a, b) => b.cost - a.cost);
    t.same(g.costs.map((c) => c.currency), expected.map((c) => c.currency), `${g.key}: its currencies, the costliest first`);
    t.ok(g.costs.every((c, i) => close(c.cost, expected[i]!.cost)), `${g.key}: ${JSON.stringify(g.costs)} as its events say`);
    t.ok(close(g.costs.reduce((n, c) => n + c.cost, 0), g.totals.cost), `${g.key}: they add up to totals.cost`);
    if (g.costs.length > 1) mixedGroups++;
  }
  t.ok(mixedGroups > 0, `${mixedGroups} groups priced in both currencies`);

  const byModel = await get('/api/usage/summary?since=7d&groupBy=model');
  const model2 = (byModel.body.groups as Array<{ key: string | null; costs: Array<{ currency: string }> }>).find((g) => g.key === 'model-2');
  t.same(model2?.costs.map((c) => c.currency), ['EUR'], 'a model priced in EUR: its cost in EUR only');

  const oneCurrency = await get('/api/usage/summary?since=7d&groupBy=relay_key&modelId=model-1');
  t.equal(oneCurrency.body.costs.length, 1, 'a window priced in one currency');
  t.ok((oneCurrency.body.groups as Array<Record<string, unknown>>).every((g) => !('costs' in g)), 'its groups carry totals.cost alone, which is in that currency');
});

t.test('a session priced in more than one currency: its cost in each', async (t) => {
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  const ids = [...new Set(events.map(sessionIdOf).filter((id): id is string => id !== null))];
  let mixed = 0;
  let single = 0;
  for (const id of ids) {
    const mine = events.filter((e) => sessionIdOf(e) === id);
    const currencies = [...new Set(mine.map((e) => e.currency).filter((c): c is string => c !== null))];
    const detail = await get(`/api/usage/sessions/${encodeURIComponent(id)}`);
    t.equal(detail.status, 200, id);
    if (currencies.length < 2) {
      single++;
      t.notOk('costs' in detail.body, `${id}: in ${currencies.length} currency, its totals.cost is its cost`);
      continue;
    }
    mixed++;
    const expected = currencies.map((currency) => ({ currency, cost: mine.filter((e) => e.currency === currency).reduce((n, e) => n + (e.cost ?? 0), 0) })).sort((a, b) => b.cost - a.cost);
    const costs = detail.body.costs as Array<{ currency: string; cost: number }>;
    t.same(costs.map((c) => c.currency), expected.map((c) => c.currency), `${id}: each currency, the costliest first`);
    t.ok(costs.every((c, i) => close(c.cost, expected[i]!.cost)), `${id}: ${JSON.stringify(costs)} as its events say`);
    t.same(detail.body.session.costs, costs, `${id}: the session itself carries them`);
  }
  t.ok(mixed > 0 && single > 0, `${mixed} sessions in two currencies, ${single} in one or none`);
});

t.test('the sessions list: each session priced in more than one currency has its cost in each', async (t) => {
  const list = await get('/api/usage/sessions?since=24h&limit=500');
  t.equal(list.status, 200);
  let mixed = 0;
  for (const s of list.body.sessions as Array<{ session_id: string; currencies: string[]; costs?: unknown }>) {
    const detail = await get(`/api/usage/sessions/${encodeURIComponent(s.session_id)}`);
    if (s.currencies.length < 2) {
      t.notOk('costs' in s, `${s.session_id}: in one currency or none, no split`);
      continue;
    }
    mixed++;
    t.same(s.costs, detail.body.costs, `${s.session_id}: the list's amounts are the session page's`);
  }
  t.ok(mixed > 0, `${mixed} sessions in two currencies`);
});

t.test('an in-house backend whose sessions carry no split: the session page reads it by currency', async (t) => {
  // A team's backend written before SessionSummary.costs (here under the selected backend's id): its sessions name their currencies only.
  const files = new FileUsageBackend({ dir: path.join(dir, 'usage'), maxFileBytes: 1 << 20, rotateDaily: true, retentionDays: 30, maxScanBytes: 1 << 30, orderSkewMs: 5000 });
  const older: UsageBackend = {
    id: 'file', async write() {},
    list: (q) => files.list(q), summary: (q) => files.summary(q),
    sessions: async (q) => (await files.sessions(q)).map(({ costs: _split, ...session }) => session),
  };
  const olderObserver = createObserver({ settings, log: silentLog, metrics: new Registry(), queue: { maxDelayMs: 5 } });
  olderObserver.addUsageBackend(older);
  const olderApp = Fastify();
  await olderApp.register(swagger, { openapi: { info: { title: 'test', version: '0' } } });
  registerLogRoutes(olderApp, olderObserver);
  await olderApp.ready();
  t.teardown(async () => { await olderApp.close(); await olderObserver.close(); });
  const list = await olderApp.inject({ method: 'GET', url: '/api/usage/sessions?since=24h&limit=500' });
  const mixed = (list.json().sessions as Array<{ session_id: string; currencies: string[]; costs?: unknown }>).filter((s) => s.currencies.length > 1);
  t.ok(mixed.length > 0 && mixed.every((s) => !('costs' in s)), 'the list names the currencies without amounts');
  for (const s of mixed) {
    const detail = (await olderApp.inject({ method: 'GET', url: `/api/usage/sessions/${encodeURIComponent(s.session_id)}` })).json();
    t.same(detail.costs, (await get(`/api/usage/sessions/${encodeURIComponent(s.session_id)}`)).body.costs, `${s.session_id}: the page's amounts, read by currency`);
  }
});

t.test('a clear 400 naming the bad parameter', async (t) => {
  const cases: Array<[string, string]> = [
    ['/api/logs?limit=501', 'limit'],
    ['/api/logs?limit=0', 'limit'],
    ['/api/logs?limit=abc', 'limit'],
    ['/api/logs?cursor=garbage', 'cursor'],
    ['/api/usage/events?status=abc', 'status'],
    ['/api/usage/events?since=yesterday', 'since'],
    ['/api/usage/events?from=01/02/2026', 'from'],
    ['/api/usage/summary?groupBy=color', 'groupBy'],
    ['/api/usage/timeseries?bucket=1s&since=7d', 'bucket'],
    ['/api/usage/timeseries?bucket=often', 'bucket'],
  ];
  for (const [url, field] of cases) {
    const res = await get(url);
    t.equal(res.status, 400, url);
    t.equal(res.body.error.field, field, `${url} names ${field}`);
    t.match(res.body.error.message, field);
  }
});

t.test('a bad groupBy names the values it may take', async (t) => {
  const summary = await get('/api/usage/summary?groupBy=color');
  t.equal(summary.body.error.message, 'groupBy: must be one of "model", "relay_key", "policy", "status"');
  t.notMatch(summary.body.error.message, /constant/);
  const series = await get('/api/usage/timeseries?groupBy=status');
  t.equal(series.status, 400);
  t.equal(series.body.error.message, 'groupBy: must be one of "model", "relay_key"');
});

t.test('a backend that cannot answer says so', async (t) => {
  settings.set('usage-logging', { backend: 'write-only' });
  t.teardown(() => settings.set('usage-logging', { backend: 'file' }));
  for (const url of ['/api/logs', '/api/logs/x', '/api/usage/summary', '/api/usage/timeseries']) {
    const res = await get(url);
    t.equal(res.status, 400, url);
    t.equal(res.body.error.code, 'RELAY_ERR_QUERY_UNSUPPORTED', url);
  }
  settings.set('usage-logging', { backend: 'not-loaded' });
  const res = await get('/api/logs');
  t.equal(res.body.error.code, 'RELAY_ERR_BACKEND_NOT_LOADED');
});

t.test('the routes are in the OpenAPI document with their schemas', async (t) => {
  const doc = app.swagger() as { paths: Record<string, { get: { parameters?: Array<{ name: string }>; responses: Record<string, unknown> } }> };
  for (const p of ['/api/logs', '/api/logs/{requestId}', '/api/usage/events', '/api/usage/summary', '/api/usage/timeseries']) t.ok(doc.paths[p]?.get, p);
  const names = doc.paths['/api/usage/events'].get.parameters?.map((p) => p.name) ?? [];
  for (const n of ['policyId', 'relayKeyId', 'modelId', 'status', 'since', 'from', 'to', 'limit', 'cursor']) t.ok(names.includes(n), `parameter ${n}`);
  t.ok(doc.paths['/api/usage/summary'].get.responses['200']);
});
