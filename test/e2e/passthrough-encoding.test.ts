// Relay asks every upstream for identity bodies (accept-encoding: identity; a request without the
// header accepts any coding, RFC 9110 12.5.3). An upstream that compresses a 2xx answer anyway on
// a route Relay signs with its own host key is refused before the first byte: compressed bytes
// hide the key from the scrubber (the upstream may have quoted it in them) and usage from the tap.
// It fails over like any bad answer, and on the last candidate the caller gets a 502 naming the
// coding, never the compressed bytes. A caller's own credential (proxy mode) has no key of Relay's
// in it: its compressed answer still reaches the caller as it came, labelled as such. A translated
// route does not translate (or inflate) what it did not ask for: a 502 naming the coding.
import t from 'tap';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { startFakeUpstream, openai, anthropic } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';
import { zstdRaw } from '../support/zstd-frame.ts';

// The refusals below are many in a row on one key: the circuit breaker is not what they test.
const relay = await startRelay({ plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS], config: { health: { circuitBreaker: { failures: 1000 } } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const HOST_KEY = 'sk-compressing/host+key-0123456789abcdef';
const OTHER_KEY = 'sk-compressing/host+key-fedcba9876543210';
const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gzip-model', hostKeys: [HOST_KEY] });
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'gzip-claude', hostKeys: [HOST_KEY] });
const twoKeys = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gzip-two-keys', hostKeys: [HOST_KEY, OTHER_KEY] });
for (const r of [s, claude, twoKeys]) await routeLive(relay, r);

const ask = (path: string, relayKey: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => fetch(`${relay.inferenceUrl}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${relayKey}`, ...headers }, body: JSON.stringify(body),
});
const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string, stream = false) => ({ model, stream, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });

const CODINGS: Array<[string, (b: Buffer) => Buffer]> = [['gzip', gzipSync], ['br', brotliCompressSync], ['deflate', deflateSync], ['zstd', zstdRaw]];

/** The key in the bytes, or in its "\/" spelling. */
const holdsKey = (text: string): boolean => text.includes(HOST_KEY) || text.replaceAll('\\/', '/').includes(HOST_KEY);
const quoting = (key: string) => `Signed with ${key}.`;

/** error.message of an error body (OpenAI's and Anthropic's shapes both have it there); '' for anything else. */
function errorMessage(text: string): string {
  try {
    return String((JSON.parse(text) as { error?: { message?: unknown } }).error?.message ?? '');
  } catch {
    return '';
  }
}

t.test('Relay asks the upstream for identity, whatever the client accepts', async (t) => {
  for (const [what, path, body] of [['passed through', '/vendor-a/v1/chat/completions', chat('gzip-model')], ['translated', '/vendor-b/v1/messages', messages('gzip-model')]] as const) {
    const res = await ask(path, s.relayKey, body, { 'accept-encoding': 'gzip, br' });
    t.equal(res.status, 200, what);
    await res.arrayBuffer();
    t.equal(up.lastRequest()!.headers['accept-encoding'], 'identity', what);
  }
});

t.test('a compressed answer quoting Relay\'s key, whole or streamed: a 502 naming the coding, nothing of it passed on', async (t) => {
  for (const [coding, compress] of CODINGS) {
    const cases: Array<[string, string, string, Record<string, unknown>, string, Buffer]> = [
      ['Chat', '/vendor-a/v1/chat/completions', s.relayKey, chat('gzip-model'), 'application/json',
        Buffer.from(JSON.stringify(openai.chatCompletion({ model: 'gzip-model', text: quoting(HOST_KEY) })))],
      ['Chat stream', '/vendor-a/v1/chat/completions', s.relayKey, { ...chat('gzip-model', true), stream_options: { include_usage: true } }, 'text/event-stream',
        Buffer.from(openai.chatChunks({ model: 'gzip-model', chunks: 1, text: quoting(HOST_KEY), includeUsage: true }).join(''))],
      ['Messages', '/vendor-b/v1/messages', claude.relayKey, messages('gzip-claude'), 'application/json',
        Buffer.from(JSON.stringify(anthropic.message({ model: 'gzip-claude', text: quoting(HOST_KEY) })))],
      ['Messages stream', '/vendor-b/v1/messages', claude.relayKey, messages('gzip-claude', true), 'text/event-stream',
        Buffer.from(anthropic.events({ model: 'gzip-claude', chunks: 1, text: quoting(HOST_KEY) }).join(''))],
    ];
    for (const [what, path, relayKey, body, type, plain] of cases) {
      const label = `${what}, ${coding}`;
      up.enqueue({ status: 200, headers: { 'content-type': type, 'content-encoding': coding }, body: compress(plain) });
      const res = await ask(path, relayKey, body);
      t.equal(res.status, 502, label);
      t.equal(res.headers.get('content-encoding'), null, `${label}: Relay's own answer, not compressed`);
      const text = await res.text();
      t.notOk(holdsKey(text), `${label}: no key`);
      t.match(errorMessage(text), new RegExp(`the upstream's answer is in content-encoding "${coding}", which Relay did not ask for \\(it asks for identity\\) and cannot check for its host key`), label);
    }
  }
});

t.test('the next key answers in identity after one that compressed: the caller gets that answer, masked', async (t) => {
  const before = up.count;
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify(openai.chatCompletion({ model: 'gzip-two-keys', text: 'compressed' }))) });
  // Whichever key is tried second answers, quoting itself.
  up.script((req) => ({ status: 200, body: openai.chatCompletion({ model: 'gzip-two-keys', text: quoting(String(req.headers.authorization).replace(/^Bearer /, '')) }) }));
  const res = await ask('/vendor-a/v1/chat/completions', twoKeys.relayKey, chat('gzip-two-keys'));
  up.script(undefined);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-encoding'), null);
  const text = await res.text();
  t.equal(up.count - before, 2, 'the second key was asked');
  const [first, second] = up.requests.slice(-2).map((r) => r.headers.authorization);
  t.not(first, second, 'with the other key');
  t.match(JSON.parse(text).choices[0].message.content, /^Signed with \[redacted host key\]\**\.$/, 'its answer, the key masked');
});

t.test('proxy mode: the caller\'s own credential, so its compressed answer passes as it came', async (t) => {
  const json = JSON.stringify(anthropic.message({ model: 'gzip-claude', text: 'compressed for you' }));
  up.enqueue({ status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(json) });
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-callers-own-key', 'X-GW-API-Key': claude.relayKey, 'X-GW-Proxy-Mode': '1', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(messages('gzip-claude')),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-encoding'), 'gzip');
  t.equal(await res.text(), json, 'fetch decodes it to the upstream JSON');
  t.equal(up.lastRequest()!.headers['x-api-key'], 'sk-ant-callers-own-key');
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
    const res = await ask('/vendor-b/v1/messages', s.relayKey, { ...messages('gzip-model'), stream });
    t.equal(res.status, 502, what);
    t.match(await res.json(), { type: 'error', error: { message: /the upstream's answer is in content-encoding "(gzip|br)", which Relay did not ask for and does not translate/ } }, what);
  }
});
