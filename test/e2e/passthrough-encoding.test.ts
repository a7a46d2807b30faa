// Passthrough keeps an upstream's content-encoding with its bytes. Relay asks upstreams for
// identity bodies (it drops accept-encoding), but one that compresses anyway must reach the
// client as compressed bytes labelled as such, not as gzip bytes posing as JSON.
import t from 'tap';
import { gzipSync } from 'node:zlib';
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
