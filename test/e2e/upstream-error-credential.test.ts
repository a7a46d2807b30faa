// An upstream that quotes the credential it was sent in its error ("Incorrect API key provided:
// sk-...") must not hand Relay's host key to the caller: passthrough (plain and gzip-encoded
// bodies) and translated routes take it out. A host key the upstream refuses is Relay's own 502
// (RELAY_ERR_HOST_KEY_REFUSED, type upstream) on both, not a 401/403 or an authentication error the
// caller would take for a verdict on its own key; other errors keep their status and wording. The
// key is found however the upstream's JSON spells it (escaped "/", \u escapes, a nested member),
// and a body Relay cannot check (a coding it cannot decode, a compressed body past 1 MB once
// decoded) is not passed on: the caller gets the upstream's status in Relay's words. zstd is
// decoded where this Node has it (22.15+); elsewhere the caller is told that it could not be.
import t from 'tap';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, type ScriptedAction } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';
import { NODE_HAS_ZSTD, zstd } from '../support/zstd-frame.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

/** An error answer quoting the credential the request carried, as OpenAI's 401 does. */
function echoKey(status: number, vendor: 'openai' | 'anthropic', gzip = false): ScriptedAction {
  return {
    kind: 'raw',
    handle(_req, res, rec) {
      const sent = String(rec.headers['x-api-key'] ?? rec.headers.authorization ?? '').replace(/^Bearer /, '');
      const message = `Incorrect API key provided: ${sent}. Key ${sent} again.`;
      const body = Buffer.from(JSON.stringify(vendor === 'anthropic'
        ? { type: 'error', error: { type: 'authentication_error', message } }
        : { error: { message, type: 'invalid_request_error', code: 'invalid_api_key' } }));
      const payload = gzip ? gzipSync(body) : body;
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(payload.length), ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
      res.end(payload);
    },
  };
}

let n = 0;
async function route(adapter: 'openai' | 'anthropic', action: ScriptedAction, keyWith = '') {
  const hostKey = `sk-secret-host-key-${++n}-abcdef${keyWith}`;
  const model = `echo-${adapter}-${n}`;
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter, model, hostKeys: [hostKey], ...(adapter === 'openai' ? { shapes: ['openai.chat'] } : {}) });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && [...s.models.values()].some((m) => m.metadata.slug === model));
  up.enqueue(action);
  return { model, hostKey, relayKey: seeded.relayKey };
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });

const REFUSED = /^The upstream refused Relay's host key for this model \(HTTP 401\): an operator must fix or replace that key; your own credentials are not at fault\./;

t.test('passthrough: a refused host key is a 502 that says so, and the key is not in the body', async (t) => {
  const r = await route('openai', echoKey(401, 'openai'));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
  t.equal(got.status, 502);
  t.notOk(got.text.includes(r.hostKey), 'no host key in the body');
  const error = JSON.parse(got.text).error;
  t.match(error, { type: 'server_error', code: 'RELAY_ERR_HOST_KEY_REFUSED' }, 'typed as the upstream failure it is');
  t.match(error.message, REFUSED, 'the message says the host key was refused');
  t.match(error.message, /The upstream said: Incorrect API key provided: \[redacted host key\]\. Key \[redacted host key\] again\.$/, "then the upstream's wording, without the key");
  t.equal(got.headers.get('content-length'), String(got.bytes.length), 'content-length fits the new body');
});

// Issue 38 item 7: Claude Code read Anthropic's authentication_error in a 502 as its own key failing.
for (const [path, adapter] of [['/vendor-b/v1/messages', 'anthropic'], ['/vendor-b/v1/messages', 'openai']] as const) {
  t.test(`Messages client, ${adapter} upstream (${adapter === 'anthropic' ? 'passthrough' : 'translated'}): a refused host key is an api_error, not an authentication_error`, async (t) => {
    const r = await route(adapter, echoKey(401, adapter));
    const got = await viaRelay(relay, path, r.relayKey, { model: r.model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(got.status, 502);
    t.notOk(got.text.includes(r.hostKey), 'no host key in the body');
    const body = JSON.parse(got.text);
    t.equal(body.type, 'error');
    t.equal(body.error.type, 'api_error', "the type of a 502 in Anthropic's vocabulary");
    t.match(body.error.message, REFUSED);
  });
}

t.test('passthrough: other errors keep their status, without the key', async (t) => {
  const r = await route('openai', echoKey(400, 'openai'));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
  t.equal(got.status, 400);
  t.notOk(got.text.includes(r.hostKey));
  t.match(got.text, /\[redacted host key\]/);
});

t.test('passthrough: a gzip-encoded error body is decoded to take the key out', async (t) => {
  const r = await route('openai', echoKey(401, 'openai', true));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model), { 'accept-encoding': 'gzip' });
  t.equal(got.status, 502);
  t.equal(got.headers.get('content-encoding'), null, 'sent decoded');
  t.notOk(got.text.includes(r.hostKey));
  t.match(JSON.parse(got.text).error.message, /The upstream said: Incorrect API key provided: \[redacted host key\]/);
});

t.test('translated: the decoded message has no key either', async (t) => {
  const r = await route('anthropic', echoKey(401, 'anthropic'));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
  t.equal(got.status, 502);
  t.notOk(got.text.includes(r.hostKey));
  t.match(JSON.parse(got.text).error, { code: 'RELAY_ERR_HOST_KEY_REFUSED', message: /\[redacted host key\]/ });
});

t.test('passthrough: an error answer cut before its end is a 502 in the caller shape', async (t) => {
  const cut: ScriptedAction = {
    kind: 'raw',
    handle(_req, res) {
      res.writeHead(401, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"error":{"message":"Incorrect API');
      setTimeout(() => res.socket?.destroy(), 20);
    },
  };
  const r = await route('openai', cut);
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
  t.equal(got.status, 502);
  t.equal(JSON.parse(got.text).error.code, 'RELAY_ERR_UPSTREAM_BAD_RESPONSE');
});

/** An error answer whose body `write` makes from the credential the request carried. */
function echoAs(status: number, write: (key: string) => Buffer | string, headers: Record<string, string> = {}): ScriptedAction {
  return {
    kind: 'raw',
    handle(_req, res, rec) {
      const body = write(String(rec.headers['x-api-key'] ?? rec.headers.authorization ?? '').replace(/^Bearer /, ''));
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers });
      res.end(body);
    },
  };
}

/** Every JSON-escaped spelling a reader would decode: what a client sees once it parsed the body. */
const decodedText = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text), (_k, v: unknown) => v).replaceAll('\\/', '/');
  } catch {
    return text;
  }
};
const slashEscaped = (key: string) => key.replaceAll('/', '\\/');
const unicodeEscaped = (key: string) => [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

for (const [what, spell] of [['escaped "/"', slashEscaped], ['\\u escapes', unicodeEscaped]] as const) {
  t.test(`passthrough: the key in ${what}, in the message and a nested member, is taken out of what the caller decodes`, async (t) => {
    const r = await route('openai', echoAs(400, (key) => `{"error":{"message":"Incorrect API key provided: ${spell(key)}","type":"invalid_request_error","details":[{"key":"${spell(key)}"}]}}`), '/with+slash');
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
    t.equal(got.status, 400, 'the status is kept');
    t.notOk(decodedText(got.text).includes(r.hostKey), 'no host key once decoded');
    t.match(JSON.parse(got.text), { error: { message: 'Incorrect API key provided: [redacted host key]', type: 'invalid_request_error', details: [{ key: '[redacted host key]' }] } });
    t.equal(got.headers.get('content-length'), String(got.bytes.length));
  });

  t.test(`translated: the key in ${what} is not in the decoded message`, async (t) => {
    const r = await route('anthropic', echoAs(400, (key) => `{"type":"error","error":{"type":"invalid_request_error","message":"bad key ${spell(key)}"}}`), '/with+slash');
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
    t.equal(got.status, 400);
    t.notOk(decodedText(got.text).includes(r.hostKey), 'no host key once decoded');
    t.equal(JSON.parse(got.text).error.message, 'bad key [redacted host key]');
  });
}

t.test('passthrough: an error body Relay cannot check for the key is not passed on; the status and retry-after are', async (t) => {
  // Past 1 MB once decoded, with the key at its end: a client would decode what Relay could not.
  const bomb = (key: string) => gzipSync(`{"error":{"message":"${'x'.repeat(2 * 1024 * 1024)} ${key}","type":"invalid_request_error"}}`);
  const cases: Array<[string, number, ScriptedAction, RegExp]> = [
    ['a gzip body past 1 MB once decoded', 400, echoAs(400, bomb, { 'content-encoding': 'gzip' }), /larger than 1048576 bytes once decoded from "gzip"/],
    ['a coding Relay does not decode', 429, echoAs(429, (key) => `{"error":{"message":"${key}"}}`, { 'content-encoding': 'compress', 'retry-after': '7' }), /content-encoding "compress", which Relay does not decode/],
    ['two codings', 400, echoAs(400, (key) => gzipSync(gzipSync(`{"error":{"message":"${key}"}}`)), { 'content-encoding': 'gzip, gzip' }), /content-encoding "gzip, gzip"/],
    ['gzip that is not', 400, echoAs(400, (key) => `{"error":{"message":"${key}"}}`, { 'content-encoding': 'gzip' }), /not valid "gzip"/],
  ];
  for (const [what, status, action, why] of cases) {
    const r = await route('openai', action);
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${r.relayKey}` }, body: JSON.stringify(chat(r.model)),
    });
    const raw = Buffer.from(await res.arrayBuffer());
    t.equal(res.status, status, `${what}: the upstream's status`);
    t.equal(res.headers.get('content-encoding'), null, `${what}: nothing encoded`);
    t.notOk(raw.includes(r.hostKey) || decodedText(raw.toString('utf8')).includes(r.hostKey), `${what}: no host key`);
    t.match(JSON.parse(raw.toString('utf8')).error.message, new RegExp(`^The upstream answered HTTP ${status}; its error body is not passed on, as Relay could not check it for its host key: it is .*${why.source}`), `${what}: says why`);
    if (status === 429) t.equal(res.headers.get('retry-after'), '7', `${what}: retry-after kept`);
  }
});

t.test('translated: a gzip-encoded error body is decoded for its words, and a bomb is not', async (t) => {
  const r = await route('anthropic', echoAs(400, (key) => gzipSync(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is bad; key ${key}"}}`), { 'content-encoding': 'gzip' }));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
  t.equal(got.status, 400);
  t.equal(JSON.parse(got.text).error.message, 'prompt is bad; key [redacted host key]', "the upstream's words, not its compressed bytes");
  const b = await route('anthropic', echoAs(400, (key) => gzipSync(`{"type":"error","error":{"type":"invalid_request_error","message":"${'x'.repeat(2 * 1024 * 1024)} ${key}"}}`), { 'content-encoding': 'gzip' }));
  const bombed = await viaRelay(relay, '/vendor-a/v1/chat/completions', b.relayKey, chat(b.model));
  t.equal(bombed.status, 400);
  t.notOk(bombed.text.includes(b.hostKey));
  t.equal(JSON.parse(bombed.text).error.message, 'the upstream answered HTTP 400; its error body was not read: it is larger than 1048576 bytes once decoded from "gzip"',
    'a body too large once decoded: the status, and why its words are not there');
});

const CODINGS: Array<[string, (text: string) => Buffer]> = [['gzip', gzipSync], ['br', brotliCompressSync], ['deflate', deflateSync], ['zstd', zstd]];
/** Why a zstd body is not read on a Node without zstd (Node 20). */
const NO_ZSTD = String.raw`it is in content-encoding "zstd", which Relay does not decode on this Node \(zstd needs Node 22\.15 or later\)`;

for (const [coding, compress] of CODINGS) {
  const readable = coding !== 'zstd' || NODE_HAS_ZSTD;
  t.test(`a ${coding} error body, passed through: ${readable ? 'decoded, the key taken out' : 'not passed on, saying this Node cannot decode it'}`, async (t) => {
    const r = await route('openai', echoAs(400, (key) => compress(`{"error":{"message":"prompt is bad; key ${key}","type":"invalid_request_error"}}`), { 'content-encoding': coding }));
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
    t.equal(got.status, 400, "the upstream's status");
    t.equal(got.headers.get('content-encoding'), null, 'sent decoded');
    t.notOk(got.text.includes(r.hostKey), 'no host key');
    const message = JSON.parse(got.text).error.message;
    if (readable) t.equal(message, 'prompt is bad; key [redacted host key]', "the upstream's words");
    else t.match(message, new RegExp(`^The upstream answered HTTP 400; its error body is not passed on, as Relay could not check it for its host key: ${NO_ZSTD}\\.$`));
  });

  t.test(`a ${coding} error body, translated: ${readable ? "the upstream's words" : 'the status, and that this Node cannot decode it'}`, async (t) => {
    const r = await route('anthropic', echoAs(400, (key) => compress(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is bad; key ${key}"}}`), { 'content-encoding': coding }));
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
    t.equal(got.status, 400, "the upstream's status");
    t.notOk(got.text.includes(r.hostKey), 'no host key');
    const message = JSON.parse(got.text).error.message;
    if (readable) t.equal(message, 'prompt is bad; key [redacted host key]', "the upstream's words, not its compressed bytes");
    else t.match(message, new RegExp(`^the upstream answered HTTP 400; its error body was not read: ${NO_ZSTD}$`));
  });
}

t.test('a zstd error body past 1 MB once decoded is not read whole, where this Node decodes zstd', { skip: NODE_HAS_ZSTD ? false : `Node ${process.versions.node} has no zstd` }, async (t) => {
  const r = await route('anthropic', echoAs(400, (key) => zstd(`{"type":"error","error":{"type":"invalid_request_error","message":"${'x'.repeat(2 * 1024 * 1024)} ${key}"}}`), { 'content-encoding': 'zstd' }));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.relayKey, chat(r.model));
  t.equal(got.status, 400);
  t.notOk(got.text.includes(r.hostKey));
  t.equal(JSON.parse(got.text).error.message, 'the upstream answered HTTP 400; its error body was not read: it is larger than 1048576 bytes once decoded from "zstd"');
});
