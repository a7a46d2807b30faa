// Passthrough keeps an upstream's content-encoding with its bytes. Relay asks upstreams for
// identity bodies (it drops accept-encoding), but one that compresses anyway must reach the
// client as compressed bytes labelled as such, not as gzip bytes posing as JSON, streamed too
// (where Relay would otherwise edit frames). A translated route does not translate (or inflate)
// what it did not ask for: a 502 naming the coding.
import t from 'tap';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gzip-model' });
await routeLive(relay, s);
const ask = (path: string, body: Record<string, unknown>) => fetch(`${relay.inferenceUrl}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.relayKey}` }, body: JSON.stringify({ model: 'gzip-model', ...body }),
});

t.test('a gzip body from the upstream reaches the client with its content-encoding', async (t) => {
  const json = JSON.stringify(openai.chatCompletion({ model: 'gzip-model' }));
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(json) });
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.relayKey}` },
    body: JSON.stringify({ model: 'gzip-model', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-encoding'), 'gzip');
  t.equal(await res.text(), json, 'fetch decodes it to the upstream JSON');
  t.equal(up.lastRequest()!.headers['accept-encoding'], undefined, 'Relay does not ask for compression');
});

t.test('a gzip stream from the upstream reaches the client whole, though Relay edits uncompressed streams', async (t) => {
  // Without stream_options the client did not ask for usage, so Relay would hide that frame.
  const frames = openai.chatChunks({ model: 'gzip-model', chunks: 3 }).join('');
  up.enqueue({ status: 200, headers: { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' }, body: gzipSync(frames) });
  const res = await ask('/vendor-a/v1/chat/completions', { stream: true, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-encoding'), 'gzip');
  t.equal(await res.text(), frames, 'decoded, the upstream frames as sent');
});

t.test('translated: a compressed answer is a 502 naming its coding, whole or streamed, a bomb included', async (t) => {
  const json = JSON.stringify(openai.chatCompletion({ model: 'gzip-model' }));
  // Past the 64 MB Relay reads of an answer once inflated.
  const bomb = gzipSync(Buffer.alloc(80 * 1024 * 1024, 0x20));
  const cases: Array<[string, boolean, Record<string, string>, Buffer]> = [
    ['a gzip answer', false, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, gzipSync(json)],
    ['a gzip bomb', false, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb],
    ['a br stream', true, { 'content-type': 'text/event-stream', 'content-encoding': 'br' }, brotliCompressSync(openai.chatChunks({ model: 'gzip-model', chunks: 3 }).join(''))],
  ];
  for (const [what, stream, headers, body] of cases) {
    up.enqueue({ status: 200, headers, body });
    const res = await ask('/vendor-b/v1/messages', { stream, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(res.status, 502, what);
    t.match(await res.json(), { type: 'error', error: { message: /the upstream's answer is in content-encoding "(gzip|br)", which Relay did not ask for and does not translate/ } }, what);
  }
});
