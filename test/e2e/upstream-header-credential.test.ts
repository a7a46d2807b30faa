// An upstream that echoes the credential it was sent in a response header (a debugging echo, a
// WWW-Authenticate realm) or as its own request id must not hand Relay's host key to the caller,
// to the captured payload or to the usage log, which viewers read. Header values are masked as
// bodies are (credential-scrub.ts); an upstream id holding a secret is not recorded, in proxy mode
// the caller's own credential included.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, eventually, startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream, type ScriptedAction } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS, { use: 'payload-file' }] });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const settings = await relay.api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 100_000 });
if (settings.status !== 200) throw new Error(`payload logging: ${settings.status}`);

/** An answer whose headers quote the credential the request carried; `stream` answers in SSE. */
function echoInHeaders(status: number, stream = false): ScriptedAction {
  return {
    kind: 'raw',
    handle(_req, res, rec) {
      const sent = String(rec.headers.authorization ?? '').replace(/^Bearer /, '');
      const headers = {
        'x-echo-key': `Bearer ${sent}`,
        'www-authenticate': `Bearer realm="${sent}"`,
        'x-request-id': sent,
        'x-debug': ['first', `second ${sent}`],
      };
      if (stream) {
        res.writeHead(status, { ...headers, 'content-type': 'text/event-stream' });
        for (const frame of openai.chatChunks({ model: 'echo-headers', includeUsage: true })) res.write(frame);
        res.end();
        return;
      }
      const body = status === 200 ? JSON.stringify(openai.chatCompletion({ model: 'echo-headers' })) : JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } });
      res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    },
  };
}

const hostKey = 'sk-secret-host-key-echoed-in-headers-0123456789';
const seeded = await seedRoute(relay, {
  baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'echo-headers', hostKeys: [hostKey], shapes: ['openai.chat'], relayKey: { payloadLoggingEnabled: true },
});
await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId));

const chat = (stream = false) => ({ model: 'echo-headers', stream, messages: [{ role: 'user', content: 'hi' }] });

for (const [what, status, stream] of [['a 200', 200, false], ['a streamed 200', 200, true], ['a 429 passed through', 429, false]] as const) {
  t.test(`${what}: the key quoted in the upstream's headers reaches neither the caller nor the records`, async (t) => {
    up.enqueue(echoInHeaders(status, stream));
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, chat(stream));
    t.equal(got.status, status, got.text);
    const head = [...got.headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n');
    t.notOk(head.includes(hostKey), 'no header the caller got holds the key');
    t.match(got.headers.get('x-echo-key'), /^Bearer \[redacted host key\]\*+$/, 'the header stays, its key masked');
    t.match(got.headers.get('www-authenticate'), /^Bearer realm="\[redacted host key\]\*+"$/);
    t.match(got.headers.get('x-debug'), /^first, second \[redacted host key\]\*+$/, 'each value of a repeated header');
    const requestId = got.headers.get('x-request-id')!;
    t.not(requestId, hostKey, "the caller gets Relay's id");
    const record = await usageRecord(relay, requestId);
    t.equal(record.upstream_request_id, null, 'an upstream id that is the key is not recorded');
    await eventually(async () => (await usageRecord(relay, requestId)).response_headers !== undefined, 5_000, 50);
    const detail = await usageRecord(relay, requestId);
    t.match(detail.response_headers, { 'x-echo-key': /redacted host key/ }, 'the captured head is what the caller got');
    t.notOk(JSON.stringify(detail).includes(hostKey), 'the key is nowhere in the record or its payload');
  });
}

t.test('an upstream id without a secret is still recorded', async (t) => {
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'x-request-id': 'req_plain_7' }, body: JSON.stringify(openai.chatCompletion({ model: 'echo-headers' })) });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, chat());
  t.equal(got.status, 200);
  t.equal((await usageRecord(relay, got.headers.get('x-request-id')!)).upstream_request_id, 'req_plain_7');
});

t.test("proxy mode: an upstream id that is the caller's own credential is not recorded either", async (t) => {
  const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'echo-proxy' });
  await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId));
  const callerKey = 'sk-ant-api03-callers-own-key-0123456789';
  const send = async () => (await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-gw-api-key': claude.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': callerKey },
    body: JSON.stringify({ model: 'echo-proxy', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  }));
  up.enqueue({
    kind: 'raw',
    handle(_req, res, rec) {
      const body = JSON.stringify(anthropic.message({ model: 'echo-proxy' }));
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': String(rec.headers['x-api-key']), 'content-length': String(Buffer.byteLength(body)) });
      res.end(body);
    },
  });
  const echoed = await send();
  t.equal(echoed.status, 200, await echoed.clone().text());
  t.equal(up.lastRequest()?.headers['x-api-key'], callerKey, "the caller's own key went upstream (proxy mode)");
  const record = await usageRecord(relay, echoed.headers.get('x-request-id')!);
  t.equal(record.upstream_request_id, null, "an upstream id that is the caller's key is not recorded");
  t.notOk(JSON.stringify(record).includes(callerKey), "the caller's key is nowhere in the record");
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_011CProxyPlain' }, body: JSON.stringify(anthropic.message({ model: 'echo-proxy' })) });
  const plain = await send();
  t.equal((await usageRecord(relay, plain.headers.get('x-request-id')!)).upstream_request_id, 'req_011CProxyPlain', 'a plain id is');
});
