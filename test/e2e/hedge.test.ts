// Hedged first bytes (issue 42 item 5), through real HTTP: a model with spec.hedge whose binding
// has not answered after afterMs gets the same request on its next binding; the first answer is
// kept, the other request is cancelled upstream (its connection closed), and the record says so.
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { P95_MIN_SAMPLES } from '../../core/pipeline/binding-meter.ts';

const relay = await startRelay({ logLevel: 'warn' });
const slowUp = await startFakeUpstream();
const fastUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await slowUp.close();
  await fastUp.close();
});

const slow = await seedRoute(relay, { baseUrl: `${slowUp.url}/v1`, adapter: 'openai', model: 'hedged' });
const fast = await seedRoute(relay, { baseUrl: `${fastUp.url}/v1`, adapter: 'openai', model: 'hedged' });
const model = (await relay.api<any>('GET', '/api/models/hedged')).body;
// The slow binding is tried first (weight 1000 to 1).
const bindings = model.spec.bindings.map((b: { hostId: string }) => ({ ...b, weight: b.hostId === slow.hostId ? 1000 : 1 }));
t.equal((await relay.api('PUT', `/api/models/by-id/${slow.modelId}`, { spec: { bindings, hedge: { afterMs: 200 } } })).status, 200);
await settled(relay, (s) => s.relayKeys.has(slow.relayKeyId) && s.models.get(slow.modelId)?.spec.hedge?.afterMs === 200
  && s.hostKeysOfHost(slow.hostId).length === 1 && s.hostKeysOfHost(fast.hostId).length === 1);
const chat = { model: 'hedged', messages: [{ role: 'user', content: 'hi' }] };

t.test('a binding silent past afterMs is hedged on the next; the first answer wins, the other is cancelled', async (t) => {
  let closed = false;
  slowUp.enqueue({ kind: 'raw', handle: (_req, res: ServerResponse) => { res.on('close', () => { closed = true; }); } });
  const started = Date.now();
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', slow.relayKey, chat);
  const took = Date.now() - started;
  t.equal(res.status, 200, res.text);
  t.ok(took >= 200 && took < 2_000, `answered soon after the hedge (${took} ms), not at the slow host's timeout`);
  t.equal(slowUp.count, 1, 'the slow binding was asked first');
  t.equal(fastUp.count, 1, 'the hedge went to the next binding');
  await eventually(() => closed, 3_000);
  t.ok(closed, 'the losing request was cancelled upstream');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  const hedge = JSON.parse(record.extras.relay_hedge);
  t.match(hedge, { afterMs: 200, delayFrom: 'afterMs', kept: record.host_slug ?? hedge.kept });
  t.not(hedge.kept, hedge.cancelled, 'the record names the kept and the cancelled binding');
  t.equal(record.attempts, 2, 'both requests counted');
});

t.test('a binding that answers before afterMs is not hedged', async (t) => {
  const before = fastUp.count;
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', slow.relayKey, chat);
  t.equal(res.status, 200);
  t.equal(fastUp.count, before, 'no hedge sent');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.extras.relay_hedge, undefined);
});

t.test("once a binding has enough recent answers, the hedge waits its p95 time to first byte, not afterMs", async (t) => {
  // Every answer of the primary takes ~100 ms to its headers; afterMs is far longer (5 s).
  const steadyUp = await startFakeUpstream({ headersDelayMs: 100 });
  const spareUp = await startFakeUpstream();
  t.teardown(async () => { await steadyUp.close(); await spareUp.close(); });
  const steady = await seedRoute(relay, { baseUrl: `${steadyUp.url}/v1`, adapter: 'openai', model: 'hedged-p95' });
  const spare = await seedRoute(relay, { baseUrl: `${spareUp.url}/v1`, adapter: 'openai', model: 'hedged-p95' });
  const current = (await relay.api<any>('GET', '/api/models/hedged-p95')).body;
  const weighted = current.spec.bindings.map((b: { hostId: string }) => ({ ...b, weight: b.hostId === steady.hostId ? 1000 : 1 }));
  t.equal((await relay.api('PUT', `/api/models/by-id/${steady.modelId}`, { spec: { bindings: weighted, hedge: { afterMs: 5_000 } } })).status, 200);
  await settled(relay, (s) => s.relayKeys.has(steady.relayKeyId) && s.models.get(steady.modelId)?.spec.hedge?.afterMs === 5_000
    && s.models.get(steady.modelId)?.spec.bindings.length === 2 && s.hostKeysOfHost(steady.hostId).length === 1 && s.hostKeysOfHost(spare.hostId).length === 1);
  const ask = { model: 'hedged-p95', messages: [{ role: 'user', content: 'hi' }] };

  // Below P95_MIN_SAMPLES answers the delay is afterMs: none of these ~100 ms answers is hedged.
  for (let i = 0; i < 3 * P95_MIN_SAMPLES && steadyUp.count < P95_MIN_SAMPLES; i++) {
    const warm = await viaRelay(relay, '/vendor-a/v1/chat/completions', steady.relayKey, ask);
    t.equal(warm.status, 200);
  }
  t.equal(steadyUp.count, P95_MIN_SAMPLES, `the primary answered ${P95_MIN_SAMPLES} requests`);
  const spareBefore = spareUp.count;

  // Now the primary says nothing: the hedge goes out after its p95 (>= 100 ms), long before 5 s.
  steadyUp.enqueue({ kind: 'raw', handle: () => {} });
  const started = Date.now();
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', steady.relayKey, ask);
  const took = Date.now() - started;
  t.equal(res.status, 200, res.text);
  t.equal(spareUp.count - spareBefore, 1, 'the hedge went to the next binding');
  t.ok(took >= 100, `not hedged before the binding's p95 of ~100 ms (${took} ms)`);
  t.ok(took < 2_500, `hedged after the p95, not after afterMs of 5000 ms (${took} ms)`);
  const hedge = JSON.parse((await usageRecord(relay, res.headers.get('x-request-id')!)).extras.relay_hedge);
  t.equal(hedge.delayFrom, 'p95');
  t.ok(hedge.afterMs >= 100 && hedge.afterMs < 2_500, `the record names the delay used (${hedge.afterMs} ms)`);
});

t.test('hedge is checked on write', async (t) => {
  const bad = await relay.api('PUT', `/api/models/by-id/${slow.modelId}`, { spec: { hedge: { afterMs: 1 } } });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /hedge\/afterMs/);
});
