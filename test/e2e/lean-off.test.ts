// server.leanHttp: false serves the inference port through Node's HTTP server only (the lean
// server's kill switch), and upstream.leanHttp: false sends upstream requests through undici (the
// lean client's): passthrough, streams and the lane's refusals still work as before.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';
import { upstreamPoolOrigins } from '../../core/http/upstream.ts';

const relay = await startRelay({ config: { server: { host: '127.0.0.1', drainTimeoutMs: 5_000, leanHttp: false }, upstream: { leanHttp: false } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'off-model' });
await routeLive(relay, seeded);
const CHAT = `${relay.inferenceUrl}/vendor-a/v1/chat/completions`;
const auth = { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' };

t.test("Node's server takes the connections itself", async (t) => {
  const listeners = relay.relay.inference.server.listeners('connection').map((fn) => fn.name);
  t.ok(listeners.includes('connectionListener'), `Node's own listener is in place (${listeners.join(', ')})`);
});

t.test('a request and a stream, served by Node', async (t) => {
  const once = await fetch(CHAT, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'off-model', messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(once.status, 200);
  t.match(await once.json(), { object: 'chat.completion' });
  const record = await usageRecord(relay, once.headers.get('x-request-id')!);
  t.match(record, { status: 200, relay_key_id: seeded.relayKeyId });

  const stream = await fetch(CHAT, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'off-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
  t.equal(stream.status, 200);
  t.match(stream.headers.get('content-type'), /text\/event-stream/);
  t.match(await stream.text(), /data: \[DONE\]/);
  t.same(upstreamPoolOrigins(), { lean: [], undici: [new URL(up.url).origin] }, 'the upstream requests went through undici');
});

t.test('the lane\'s refusals', async (t) => {
  const wrongType = await fetch(CHAT, { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: '{}' });
  t.equal(wrongType.status, 415);
  const broken = await fetch(CHAT, { method: 'POST', headers: auth, body: '{' });
  t.equal(broken.status, 400);
  t.equal(((await broken.json()) as { error: { code: string } }).error.code, 'RELAY_ERR_INVALID_JSON');
});
