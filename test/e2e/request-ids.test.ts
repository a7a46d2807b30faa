// Request ids end to end (issue 43 item 4): the client's x-request-id kept when safe (recorded,
// sent upstream, in log lines) and Relay's own id still unique; the upstream's own id (OpenAI's
// x-request-id, Anthropic's request-id) recorded in the usage event beside it.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, usageRecord, viaRelay } from '../support/relay-client.ts';

const logs: string[] = [];
const relay = await startRelay({ logLevel: 'info', logStream: { write: (line: string) => { logs.push(line); } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt-ids' });
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-ids' });
// Nothing listens on port 9 of loopback: the attempt fails and logs a warning.
const dead = await seedRoute(relay, { baseUrl: 'http://127.0.0.1:9/v1', adapter: 'openai', model: 'dead-ids' });
for (const seeded of [gpt, claude, dead]) await routeLive(relay, seeded);

const chatBody = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('passthrough: the client id is sent upstream and recorded with the upstream id', async (t) => {
  up.reset();
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'x-request-id': 'req_openai_42' }, body: JSON.stringify(openai.chatCompletion({ model: 'gpt-ids' })) });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatBody('gpt-ids'), { 'x-request-id': 'client-trace.01:a' });
  t.equal(res.status, 200);
  const relayId = res.headers.get('x-request-id')!;
  t.match(relayId, UUID, "the client gets Relay's own id, unique per request");
  t.equal(up.lastRequest()?.headers['x-request-id'], 'client-trace.01:a', 'the upstream sees the client id');
  const record = await usageRecord(relay, relayId);
  t.equal(record.client_request_id, 'client-trace.01:a');
  t.equal(record.upstream_request_id, 'req_openai_42');
});

t.test('a repeated client id still gets a usage record per request', async (t) => {
  up.reset();
  const first = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatBody('gpt-ids'), { 'x-request-id': 'same-id' });
  const second = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatBody('gpt-ids'), { 'x-request-id': 'same-id' });
  const ids = [first.headers.get('x-request-id')!, second.headers.get('x-request-id')!];
  t.not(ids[0], ids[1]);
  for (const id of ids) t.equal((await usageRecord(relay, id)).client_request_id, 'same-id');
});

t.test('an unsafe client id is not kept: Relay sends its own upstream', async (t) => {
  for (const bad of ['has space', 'x'.repeat(129), 'new\u00e9line', 'a;b']) {
    up.reset();
    const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', gpt.relayKey, chatBody('gpt-ids'), { 'x-request-id': bad });
    t.equal(res.status, 200, JSON.stringify(bad));
    const relayId = res.headers.get('x-request-id')!;
    t.equal(up.lastRequest()?.headers['x-request-id'], relayId, 'the upstream sees Relay\'s id');
    const record = await usageRecord(relay, relayId);
    t.equal(record.client_request_id, null);
    t.notOk(JSON.stringify(record).includes(bad), 'the unsafe value is stored nowhere');
  }
});

t.test('translated to Anthropic: Relay id upstream, Anthropic request-id recorded', async (t) => {
  up.reset();
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_011CAnthropic' }, body: JSON.stringify(anthropic.message({ model: 'claude-ids' })) });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', claude.relayKey, chatBody('claude-ids'));
  t.equal(res.status, 200, res.text);
  const relayId = res.headers.get('x-request-id')!;
  t.equal(up.lastRequest()?.headers['x-request-id'], relayId, 'sent upstream when the client sent none');
  const record = await usageRecord(relay, relayId);
  t.equal(record.client_request_id, null);
  t.equal(record.upstream_request_id, 'req_011CAnthropic');
});

t.test('a log line of the request names Relay\'s id and the client\'s', async (t) => {
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', dead.relayKey, chatBody('dead-ids'), { 'x-request-id': 'client-dead-1' });
  t.equal(res.status, 502, res.text);
  const relayId = res.headers.get('x-request-id')!;
  const line = logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'upstream attempt failed' && l.reqId === relayId);
  t.ok(line, 'the attempt warning carries reqId');
  t.equal(line?.clientRequestId, 'client-dead-1');
});
