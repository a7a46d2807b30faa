// The otel plugin against real OTLP receivers (test/support/otlp-receiver.ts decodes with the
// official protos): a failed-over translated stream yields a SERVER span with a CLIENT child per
// upstream call under the GenAI conventions' attribute names; W3C traceparent is kept from the
// client and sent upstream as the upstream call's own context; prompt and completion never leave
// in a span; the operator's ratio decides, not a client's sampled flag (unless trusted), and a client's
// tracestate and baggage go upstream only when trusted; gRPC export; /metrics exported as OTLP metrics.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { faults, openai, refusingUrl, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { setBindingWeights, settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { startOtlpGrpcReceiver, startOtlpHttpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

// The batch processor's standard variable: export within 50 ms rather than 5 s.
process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
// And give up on an unreachable collector within 1 s (the exporter's standard variable).
process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '1000';

const PROMPT = 'PROMPT-never-in-a-span-7f3a';
const COMPLETION = 'COMPLETION-never-in-a-span-91c2';
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

const receiver = await startOtlpHttpReceiver();
const grpcReceiver = await startOtlpGrpcReceiver();
const upstreams: FakeUpstream[] = [];
const relays: TestRelay[] = [];
t.teardown(async () => {
  for (const r of relays) await r.close();
  await Promise.all([receiver.close(), grpcReceiver.close(), ...upstreams.map((u) => u.close())]);
});

async function fake(): Promise<FakeUpstream> {
  const up = await startFakeUpstream({ text: COMPLETION, chunks: 4 });
  upstreams.push(up);
  return up;
}

async function relayWith(otel: Record<string, unknown>): Promise<TestRelay> {
  const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'otel', options: otel }] });
  relays.push(relay);
  return relay;
}

const traceId = () => randomBytes(16).toString('hex');
const spanId = () => randomBytes(8).toString('hex');

async function spansOf(r: OtlpReceiver, trace: string, n: number): Promise<ReceivedSpan[]> {
  await eventually(() => r.spans.filter((s) => s.traceId === trace).length >= n, 5_000, 20);
  return r.spans.filter((s) => s.traceId === trace);
}

const relay = await relayWith({ endpoint: receiver.url, protocol: 'http/protobuf', sampleRatio: 1, serviceName: 'relay-under-test', metrics: true, metricsIntervalMs: 1000 });
// One model on two Anthropic hosts, the first tried first; the client speaks OpenAI Chat: translated.
const failing = await fake();
const healthy = await fake();
const a = await seedRoute(relay, { baseUrl: `${failing.url}/v1`, adapter: 'anthropic', model: 'otel-claude', upstreamModel: 'claude-up-1' });
const b = await seedRoute(relay, { baseUrl: `${healthy.url}/v1`, adapter: 'anthropic', model: 'otel-claude', upstreamModel: 'claude-up-1' });
await setBindingWeights(relay, a.modelId, { [a.hostId]: 1000, [b.hostId]: 1 });
const passthroughUp = await fake();
const p = await seedRoute(relay, { baseUrl: `${passthroughUp.url}/v1`, adapter: 'openai', model: 'otel-gpt' });
await settled(relay, (s) => s.relayKeys.has(a.relayKeyId) && s.relayKeys.has(p.relayKeyId) && s.hostKeysOfHost(b.hostId).length === 1
  && s.models.get(a.modelId)?.spec.bindings.find((x) => x.hostId === a.hostId)?.weight === 1000);
const hostSlug = async (id: string) => (await relay.api('GET', `/api/hosts/${id}`)).body.metadata.slug as string;

const chat = (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: PROMPT }] });

t.test('a failed-over translated stream: the span tree, its conventions, and traceparent both ways', async (t) => {
  failing.enqueue(faults.serverError({ vendor: 'anthropic', status: 503 }));
  const trace = traceId();
  const clientSpan = spanId();
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', b.relayKey, chat('otel-claude', true), {
    traceparent: `00-${trace}-${clientSpan}-01`, 'x-request-id': 'client-req-42',
  });
  t.equal(got.status, 200);
  t.match(got.text, /"content":"COMPLETI"/, 'the client got the stream (its first piece)');
  t.equal(failing.count, 1, 'the first host was tried');
  t.equal(healthy.count, 1, 'and the second answered');

  const spans = await spansOf(receiver, trace, 3);
  t.equal(spans.length, 3, 'one request span and two upstream calls, all in the client\'s trace');
  const server = spans.find((s) => s.kind === SERVER)!;
  t.ok(server, 'a SERVER span for the request');
  t.equal(server.parentSpanId, clientSpan, 'a child of the client\'s span');
  t.equal(server.name, 'chat otel-claude');
  t.equal(server.resource['service.name'], 'relay-under-test');
  t.match(server.attributes, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.system': 'anthropic',
    'gen_ai.request.model': 'otel-claude',
    'gen_ai.response.model': 'claude-up-1',
    'gen_ai.request.stream': true,
    'http.response.status_code': 200,
    'relay.attempts': 2,
    'relay.model': 'otel-claude',
    'relay.client_request_id': 'client-req-42',
    'relay.request_id': got.headers.get('x-request-id'),
  });
  t.ok((server.attributes['gen_ai.usage.input_tokens'] as number) > 0, 'input tokens');
  t.ok((server.attributes['gen_ai.usage.output_tokens'] as number) > 0, 'output tokens');
  t.ok((server.attributes['gen_ai.response.time_to_first_chunk'] as number) > 0, 'time to first chunk');
  t.ok(server.events.some((e) => e.name === 'relay.first_byte'), 'time to first byte as an event');

  const calls = spans.filter((s) => s.kind === CLIENT);
  t.equal(calls.length, 2);
  for (const call of calls) {
    t.equal(call.parentSpanId, server.spanId, 'an upstream call is a child of the request span');
    t.equal(call.name, 'chat claude-up-1');
    t.match(call.attributes, { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'claude-up-1', 'relay.upstream_shape': 'anthropic.messages', 'server.address': '127.0.0.1' });
  }
  const [first, second] = calls.sort((x, y) => (x.attributes['relay.attempt'] as number) - (y.attributes['relay.attempt'] as number));
  t.match(first!.attributes, { 'relay.attempt': 1, 'relay.host': await hostSlug(a.hostId), 'relay.host_key.id': a.hostKeyIds[0], 'http.response.status_code': 503, 'relay.failover.reason': 'server', 'relay.binding': `otel-claude/${await hostSlug(a.hostId)}` });
  t.equal(first!.status, ERROR, 'the failed call is an error');
  t.match(second!.attributes, { 'relay.attempt': 2, 'relay.host': await hostSlug(b.hostId), 'relay.host_key.id': b.hostKeyIds[0], 'http.response.status_code': 200 });
  t.notOk('relay.failover.reason' in second!.attributes, 'the answering call did not fail over');
  t.not(second!.status, ERROR);

  // Each upstream got its own call's context, in the client's trace: never the client's header as is.
  t.equal(failing.requests[0]!.headers.traceparent, `00-${trace}-${first!.spanId}-01`, 'the first host saw the first call\'s span');
  t.equal(healthy.requests[0]!.headers.traceparent, `00-${trace}-${second!.spanId}-01`, 'the second host saw the second call\'s span');

  const scrape = String((await relay.api<string>('GET', '/metrics')).body);
  t.ok(Number(/^relay_otel_spans_exported_total\{result="success"\} (\d+)/m.exec(scrape)?.[1]) >= 3, 'exported spans are counted');
  t.match(scrape, /^relay_otel_spans_exported_total\{result="failure"\} 0$/m, 'and none failed');

  const exported = Buffer.concat(receiver.bodies).toString('latin1');
  t.notOk(exported.includes(PROMPT), 'no prompt text in any exported span');
  t.notOk(exported.includes('COMPLETION'), 'no completion text in any exported span');
});

t.test('without a client traceparent: a new trace, and the upstream joins it (passthrough)', async (t) => {
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', p.relayKey, chat('otel-gpt', false));
  t.equal(got.status, 200);
  const header = String(passthroughUp.lastRequest()!.headers.traceparent);
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(header);
  t.ok(m, `the upstream got a traceparent (${header})`);
  const spans = await spansOf(receiver, m![1]!, 2);
  const server = spans.find((s) => s.kind === SERVER)!;
  const call = spans.find((s) => s.kind === CLIENT)!;
  t.equal(server.parentSpanId, '', 'a root span');
  t.equal(call.spanId, m![2], 'the upstream\'s parent is the upstream call span');
  t.match(server.attributes, { 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'otel-gpt', 'gen_ai.response.model': 'otel-gpt', 'relay.inbound_shape': 'openai.chat', 'gen_ai.request.stream': false });
  t.notOk(Buffer.concat(receiver.bodies).toString('latin1').includes(PROMPT), 'no prompt text');
});

t.test('a caller\'s 1 MB model name: the span keeps its first 1024 characters, the usage record its first 200', async (t) => {
  const trace = traceId();
  const long = 'm'.repeat(1024 * 1024);
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', p.relayKey, chat(long, false), { traceparent: `00-${trace}-${spanId()}-01` });
  t.equal(got.status, 404);
  const [server] = await spansOf(receiver, trace, 1);
  t.equal(String(server!.attributes['gen_ai.request.model']).length, 1024);
  t.equal(server!.name, `chat ${'m'.repeat(200)}… (1048576 characters)`, 'its name, the first 200');
  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.equal(record.model_requested, `${'m'.repeat(200)}… (1048576 characters)`);
});

t.test('an answer that names another model: the span\'s response model is the one that answered', async (t) => {
  passthroughUp.enqueueStream({ headers: { 'content-type': 'text/event-stream' }, frames: openai.chatChunks({ model: 'otel-gpt-rescue', includeUsage: true }) });
  const trace = traceId();
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', p.relayKey, chat('otel-gpt', true), { traceparent: `00-${trace}-${spanId()}-01` });
  t.equal(got.status, 200);
  const server = (await spansOf(receiver, trace, 2)).find((s) => s.kind === SERVER)!;
  t.match(server.attributes, { 'gen_ai.request.model': 'otel-gpt', 'gen_ai.response.model': 'otel-gpt-rescue' });
});

/** A relay at `otel` options with one passthrough route: its upstream, and a chat request with the headers given. */
async function tracedRoute(t: Test, otel: Record<string, unknown>, model: string) {
  const r = await relayWith(otel);
  const up = await fake();
  const s = await seedRoute(r, { baseUrl: `${up.url}/v1`, adapter: 'openai', model });
  await settled(r, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length === 1);
  const send = async (headers: Record<string, string> = {}) => {
    const got = await viaRelay(r, '/vendor-a/v1/chat/completions', s.relayKey, chat(model, false), headers);
    t.equal(got.status, 200, `${model}: served`);
    return up.lastRequest()!.headers;
  };
  return { relay: r, send };
}

// What a client claims beyond its trace id and parent span: never Relay's word unless trusted.
const CLIENT_STATE = { tracestate: 'evil=injected-by-client', baggage: 'user=client-chosen' };

t.test('the ratio decides, not the client\'s sampled flag: ratio 0 exports nothing of a sampled traceparent\'s request', async (t) => {
  const { relay: off, send } = await tracedRoute(t, { endpoint: receiver.url, sampleRatio: 0 }, 'otel-ratio-0');
  const trace = traceId();
  const upstream = await send({ traceparent: `00-${trace}-${spanId()}-01`, ...CLIENT_STATE });
  t.equal(upstream.traceparent?.slice(0, 35), `00-${trace}`, 'the upstream is still in the client\'s trace');
  t.match(upstream.traceparent, /-00$/, 'unsampled, as Relay decided');
  t.notOk('tracestate' in upstream, 'the client\'s tracestate did not go upstream');
  t.notOk('baggage' in upstream, 'nor its baggage');
  await off.close(); // exports what is queued
  t.equal(receiver.spans.filter((x) => x.traceId === trace).length, 0, 'no span exported');
});

t.test('ratio 1 traces a request whose traceparent says not sampled, in the client\'s trace', async (t) => {
  const trace = traceId();
  const clientSpan = spanId();
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', p.relayKey, chat('otel-gpt', false), { traceparent: `00-${trace}-${clientSpan}-00`, ...CLIENT_STATE });
  t.equal(got.status, 200);
  const spans = await spansOf(receiver, trace, 2);
  const server = spans.find((x) => x.kind === SERVER)!;
  const call = spans.find((x) => x.kind === CLIENT)!;
  t.equal(server.parentSpanId, clientSpan, 'a child of the client\'s span');
  const upstream = passthroughUp.lastRequest()!.headers;
  t.equal(upstream.traceparent, `00-${trace}-${call.spanId}-01`, 'the upstream saw the call\'s span, sampled');
  t.notOk('tracestate' in upstream, 'the client\'s tracestate did not go upstream');
  t.notOk('baggage' in upstream, 'nor its baggage');
});

t.test('trustInboundTraceContext: the client\'s flag wins both ways, its tracestate and baggage go upstream', async (t) => {
  const { relay: trusting, send } = await tracedRoute(t, { endpoint: receiver.url, sampleRatio: 1, trustInboundTraceContext: true }, 'otel-trusting');
  const hidden = traceId();
  t.match((await send({ traceparent: `00-${hidden}-${spanId()}-00` })).traceparent, new RegExp(`^00-${hidden}-[0-9a-f]{16}-00$`), 'not sampled, as the client said');
  const sampled = traceId();
  const upstream = await send({ traceparent: `00-${sampled}-${spanId()}-01`, ...CLIENT_STATE });
  t.equal(upstream.tracestate, CLIENT_STATE.tracestate, 'the trusted tracestate went upstream');
  t.equal(upstream.baggage, CLIENT_STATE.baggage, 'and the trusted baggage');
  await trusting.close();
  t.equal(receiver.spans.filter((x) => x.traceId === hidden).length, 0, 'the not-sampled request was not exported');
  t.equal(receiver.spans.filter((x) => x.traceId === sampled).length, 2, 'the sampled one was');
});

t.test('gRPC export, and a trusted sampled traceparent followed at ratio 0', async (t) => {
  const { send } = await tracedRoute(t, { endpoint: grpcReceiver.url, protocol: 'grpc', sampleRatio: 0, trustInboundTraceContext: true }, 'otel-grpc');

  // Ratio 0: a request of its own is not sampled, but its upstream still gets a traceparent (flags 00).
  const unsampled = /^00-([0-9a-f]{32})-[0-9a-f]{16}-00$/.exec(String((await send()).traceparent));
  t.ok(unsampled, 'an unsampled traceparent upstream');

  // A trusted client's sampled traceparent is followed whatever the ratio, and exported over gRPC.
  const trace = traceId();
  await send({ traceparent: `00-${trace}-${spanId()}-01` });
  const spans = await spansOf(grpcReceiver, trace, 2);
  t.equal(spans.length, 2, 'the request and its upstream call arrived over gRPC');
  t.match(spans.find((x) => x.kind === SERVER)!.attributes, { 'gen_ai.request.model': 'otel-grpc', 'gen_ai.provider.name': 'openai' });
  t.notOk(grpcReceiver.spans.some((x) => x.traceId === unsampled![1]), 'the unsampled request was not exported');
});

t.test('/metrics as OTLP metrics: counters, gauges and histograms with their labels', async (t) => {
  await eventually(() => receiver.metrics.some((m) => m.name === 'relay_requests_total' && m.points.some((p) => p.model === 'otel-claude')), 5_000, 50);
  const byName = new Map(receiver.metrics.map((m) => [m.name, m]));
  t.match(byName.get('relay_requests_total')!.points.find((p) => p.model === 'otel-claude'), { model: 'otel-claude', shape: 'openai.chat', status_class: '2xx' });
  t.ok(byName.get('relay_time_to_first_byte_seconds')?.points.some((p) => p.model === 'otel-claude'), 'a histogram, by model and host');
  t.ok(byName.has('relay_log_queue_depth'), 'a gauge');
  t.ok(byName.get('relay_failovers_total')?.points.some((p) => p.reason === 'server'), 'failovers by reason');
});

t.test('a bad option stops start-up with its pointer', async (t) => {
  const { relayCheck, DUMMY_ENV } = await import('../support/relay-check.ts');
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const file = `${mkdtempSync(`${tmpdir()}/otel-check-`)}/relay.yaml`;
  writeFileSync(file, 'plugins:\n  - use: auth-bearer\n  - use: otel\n    options: { endpoint: "ftp://collector:4318", sampleRatio: 2 }\n');
  const res = await relayCheck(file, DUMMY_ENV);
  t.not(res.code, 0);
  t.match(res.err, /\/plugins\/1\/options\/(endpoint|sampleRatio).*\(plugin otel\)/);
});

t.test('a collector that is down: failed exports are counted, requests are served as before', async (t) => {
  const down = await relayWith({ endpoint: await refusingUrl(), sampleRatio: 1 });
  const up = await fake();
  const s = await seedRoute(down, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'otel-down' });
  await settled(down, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length === 1);
  t.equal((await viaRelay(down, '/vendor-a/v1/chat/completions', s.relayKey, chat('otel-down', false))).status, 200);
  await eventually(async () => /^relay_otel_spans_exported_total\{result="failure"\} [1-9]/m.test(String((await down.api<string>('GET', '/metrics')).body)), 8_000, 100);
  t.pass('the failed export is counted');
});
