// A hedged request under the otel plugin: each request sent upstream is an upstream call of its
// own in the trace (a CLIENT span) and carries that span as its traceparent; the cancelled one is
// marked `hedge_lost`, the kept one carries the answer's status.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';
import { startOtlpHttpReceiver } from '../support/otlp-receiver.ts';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

const receiver = await startOtlpHttpReceiver();
const relay = await startRelay({ logLevel: 'warn', plugins: [...DEFAULT_TEST_PLUGINS, { use: 'otel', options: { endpoint: receiver.url, protocol: 'http/protobuf', sampleRatio: 1 } }] });
const slowUp = await startFakeUpstream();
const fastUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await Promise.all([slowUp.close(), fastUp.close(), receiver.close()]);
});

const slow = await seedRoute(relay, { baseUrl: `${slowUp.url}/v1`, adapter: 'openai', model: 'hedged-traced' });
const fast = await seedRoute(relay, { baseUrl: `${fastUp.url}/v1`, adapter: 'openai', model: 'hedged-traced' });
const model = (await relay.api<any>('GET', '/api/models/hedged-traced')).body;
const bindings = model.spec.bindings.map((b: { hostId: string }) => ({ ...b, weight: b.hostId === slow.hostId ? 1000 : 1 }));
t.equal((await relay.api('PUT', `/api/models/by-id/${slow.modelId}`, { spec: { bindings, hedge: { afterMs: 150 } } })).status, 200);
await settled(relay, (s) => s.relayKeys.has(slow.relayKeyId) && s.models.get(slow.modelId)?.spec.hedge?.afterMs === 150
  && s.hostKeysOfHost(slow.hostId).length === 1 && s.hostKeysOfHost(fast.hostId).length === 1);
const hostSlug = async (id: string) => (await relay.api('GET', `/api/hosts/${id}`)).body.metadata.slug as string;

t.test('both requests of a hedge are upstream calls in the trace, each with its own traceparent', async (t) => {
  slowUp.enqueue({ kind: 'raw', handle: (_req, _res: ServerResponse) => { /* never answers: the hedge wins */ } });
  const trace = randomBytes(16).toString('hex');
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', slow.relayKey, { model: 'hedged-traced', messages: [{ role: 'user', content: 'hi' }] },
    { traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01` });
  t.equal(res.status, 200, res.text);
  t.equal(slowUp.count, 1);
  t.equal(fastUp.count, 1, 'the hedge was sent');

  await eventually(() => receiver.spans.filter((s) => s.traceId === trace).length >= 3, 5_000, 20);
  const spans = receiver.spans.filter((s) => s.traceId === trace);
  const server = spans.find((s) => s.kind === SERVER)!;
  const calls = spans.filter((s) => s.kind === CLIENT);
  t.equal(calls.length, 2, 'one upstream call span per request sent');
  for (const call of calls) t.equal(call.parentSpanId, server.spanId, 'each a child of the request span');

  const [slowSlug, fastSlug] = [await hostSlug(slow.hostId), await hostSlug(fast.hostId)];
  const slowCall = calls.find((c) => c.attributes['relay.host'] === slowSlug)!;
  const fastCall = calls.find((c) => c.attributes['relay.host'] === fastSlug)!;
  t.ok(slowCall && fastCall, 'a span for each binding');
  t.match(slowCall.attributes, { 'relay.attempt': 1, 'error.type': 'hedge_lost' });
  t.equal(slowCall.status, ERROR, 'the cancelled request is marked');
  t.match(fastCall.attributes, { 'relay.attempt': 2, 'http.response.status_code': 200 });
  t.notOk('error.type' in fastCall.attributes, 'the kept request is not an error');
  t.equal(slowUp.requests[0]!.headers.traceparent, `00-${trace}-${slowCall.spanId}-01`, 'the first binding saw its own call\'s span');
  t.equal(fastUp.requests[0]!.headers.traceparent, `00-${trace}-${fastCall.spanId}-01`, 'the hedge carried its own call\'s span');
});

