// An upstream that answers with a redirect (a moved host, or one that wants the host key sent
// elsewhere): Relay does not follow it, so the host key never reaches the other host, and does not
// hand it to the caller either (a client that follows a 307 would re-send its prompt and its own
// headers there). Passed through or translated, streamed or not, the caller gets a 502 naming the
// upstream's answer; a model with another binding is served by it.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, setBindingWeights } from '../support/relay-client.ts';

/** A server that records what it was sent; `answer` writes each reply. */
async function recordingServer(answer: (res: http.ServerResponse) => void) {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      answer(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

const elsewhere = await recordingServer((res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"answered":"by the redirect target"}');
});
let status = 302;
const ANSWER = '{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"from a redirect"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
const redirecting = await recordingServer((res) => {
  // A body a reader would take for an answer: a redirect is not one, whatever it carries.
  res.writeHead(status, { location: `${elsewhere.url}/v1/chat/completions`, 'content-type': 'application/json' });
  res.end(ANSWER);
});
const relay = await startRelay();
const good = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await redirecting.close();
  await elsewhere.close();
  await good.close();
});

const HOST_KEY = 'sk-redirected-host-key-0123456789';

/** POSTs through Relay without following a redirect, as a client that would not be fooled. */
async function ask(path: string, relayKey: string, body: unknown) {
  const res = await fetch(`${relay.inferenceUrl}${path}`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${relayKey}` }, body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const chat = (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string, stream: boolean) => ({ model, stream, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

for (const code of [301, 302, 307, 308]) {
  t.test(`HTTP ${code}: a 502 that says so, and nobody follows it`, async (t) => {
    status = code;
    // Routes of their own: each failure counts against the host's circuit.
    const openai = await seedRoute(relay, { baseUrl: `${redirecting.url}/v1`, adapter: 'openai', model: `moved-gpt-${code}`, hostKeys: [HOST_KEY], shapes: ['openai.chat'] });
    const anthropic = await seedRoute(relay, { baseUrl: `${redirecting.url}/v1`, adapter: 'anthropic', model: `moved-claude-${code}`, hostKeys: [HOST_KEY] });
    await routeLive(relay, openai);
    await routeLive(relay, anthropic);
    const cases = [
      ['Chat -> OpenAI, passed through', '/vendor-a/v1/chat/completions', openai, chat],
      ['Messages -> Anthropic, passed through', '/vendor-b/v1/messages', anthropic, messages],
      ['Messages -> OpenAI, translated', '/vendor-b/v1/messages', openai, messages],
      ['Chat -> Anthropic, translated', '/vendor-a/v1/chat/completions', anthropic, chat],
    ] as const;
    for (const [what, path, route, body] of cases) {
      for (const stream of [false, true]) {
        const label = `${what}${stream ? ', streamed' : ''}`;
        const res = await ask(path, route.relayKey, body(route.modelSlug, stream));
        t.equal(res.status, 502, `${label}: ${res.text.slice(0, 200)}`);
        t.equal(res.headers.get('location'), null, `${label}: no Location reaches the caller`);
        t.match(res.text, new RegExp(`the upstream answered HTTP ${code}, a redirect, which Relay does not follow`), `${label}: the message names the upstream's answer`);
        t.notMatch(res.text, /from a redirect/, `${label}: the redirect's body is not read as an answer`);
      }
    }
    t.equal(elsewhere.seen.length, 0, 'the redirect target got no request, so never the host key');
  });
}

t.test('a redirect fails over to the next binding before the first byte', async (t) => {
  status = 307;
  const moved = await seedRoute(relay, { baseUrl: `${redirecting.url}/v1`, adapter: 'openai', model: 'moved-then-good', hostKeys: [HOST_KEY] });
  const served = await seedRoute(relay, { baseUrl: `${good.url}/v1`, adapter: 'openai', model: 'moved-then-good' });
  await setBindingWeights(relay, moved.modelId, { [moved.hostId]: 1_000, [served.hostId]: 1 });
  await routeLive(relay, moved);
  const before = redirecting.seen.length;
  const res = await ask('/vendor-a/v1/chat/completions', moved.relayKey, chat('moved-then-good', false));
  t.equal(res.status, 200, res.text.slice(0, 200));
  t.equal(redirecting.seen.length - before, 1, 'the redirecting host was tried first');
  t.equal(elsewhere.seen.length, 0, 'and its redirect was not followed');
});
