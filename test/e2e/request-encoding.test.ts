// A request body's Content-Encoding: gzip, deflate and br bodies are decoded and served, passed
// through and translated, and the upstream gets the decoded body without the header; a coding
// Relay cannot decode is a 415 naming it; a body that is not what its header says is a 400; and a
// small body that unpacks past server.bodyLimitBytes is a 413, never a process full of zeros.
import t from 'tap';
import zlib from 'node:zlib';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const BODY_LIMIT = 64 * 1024;
const relay = await startRelay({ config: { server: { host: '127.0.0.1', bodyLimitBytes: BODY_LIMIT } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt', upstreamModel: 'gpt-5', policy: { modelIds: '*' } });
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(gpt.relayKeyId) && s.relayKeys.has(claude.relayKeyId));

const ENCODE: Record<string, (body: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  br: (b) => zlib.brotliCompressSync(b),
};

async function send(relayKey: string, body: Buffer, coding: string | null): Promise<{ status: number; json: any }> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${relayKey}`, 'content-type': 'application/json', ...(coding ? { 'content-encoding': coding } : {}) },
    body,
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const chat = (model: string) => Buffer.from(JSON.stringify({ model, messages: [{ role: 'user', content: 'compressed ünïcode' }] }));

t.test('gzip, deflate and br bodies are decoded: passed through, the upstream gets the JSON without the header', async (t) => {
  for (const [coding, encode] of Object.entries(ENCODE)) {
    up.reset();
    const res = await send(gpt.relayKey, encode(chat('gpt')), coding);
    t.equal(res.status, 200, coding);
    const seen = up.lastRequest()!;
    t.equal(seen.json?.messages?.[0]?.content, 'compressed ünïcode', `${coding}: the upstream reads the decoded body`);
    t.equal(seen.headers['content-encoding'], undefined, `${coding}: no content-encoding goes on`);
  }
  const upper = await send(gpt.relayKey, zlib.gzipSync(chat('gpt')), 'GZIP');
  t.equal(upper.status, 200, 'the coding is read without regard to case');
  const identity = await send(gpt.relayKey, chat('gpt'), 'identity');
  t.equal(identity.status, 200, 'identity is no coding');
});

t.test('a compressed body is translated too', async (t) => {
  up.reset();
  const res = await send(claude.relayKey, zlib.brotliCompressSync(chat('claude')), 'br');
  t.equal(res.status, 200);
  t.equal(up.lastRequest()!.pathname, '/v1/messages');
  t.match(JSON.stringify(up.lastRequest()!.json?.messages), /compressed ünïcode/);
});

t.test('a coding Relay cannot decode is a 415 naming it, and nothing reaches the upstream', async (t) => {
  for (const coding of ['compress', 'gzip, br', 'zstd-but-not']) {
    const before = up.count;
    const res = await send(gpt.relayKey, zlib.gzipSync(chat('gpt')), coding);
    t.equal(res.status, 415, coding);
    t.equal(res.json.error.code, 'RELAY_ERR_UNSUPPORTED_MEDIA_TYPE');
    t.match(res.json.error.message, `content-encoding "${coding}" is not accepted`);
    t.match(res.json.error.message, /gzip, deflate, br/, 'says what is accepted');
    t.equal(up.count, before);
  }
});

t.test('a body that is not what its content-encoding says is a 400 naming the coding', async (t) => {
  const plain = await send(gpt.relayKey, chat('gpt'), 'gzip');
  t.equal(plain.status, 400);
  t.match(plain.json.error.message, 'the request body is not valid gzip');
  const truncated = zlib.gzipSync(chat('gpt'));
  const cut = await send(gpt.relayKey, truncated.subarray(0, truncated.length - 10), 'gzip');
  t.equal(cut.status, 400, 'a truncated stream');
});

t.test('a body that unpacks past the body limit is a 413, and the next request is served', async (t) => {
  const bomb = zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
  t.ok(bomb.length < BODY_LIMIT, `${bomb.length} bytes compressed, under the limit`);
  const res = await send(gpt.relayKey, bomb, 'gzip');
  t.equal(res.status, 413);
  t.equal(res.json.error.code, 'RELAY_ERR_BODY_TOO_LARGE');
  t.match(res.json.error.message, new RegExp(`limit of ${BODY_LIMIT} bytes \\(server\\.bodyLimitBytes\\) once decoded`));
  t.equal((await send(gpt.relayKey, zlib.gzipSync(chat('gpt')), 'gzip')).status, 200);
});

t.test('a keyless client is refused before its compressed body is read', async (t) => {
  const res = await send('not-a-key', zlib.gzipSync(chat('gpt')), 'compress');
  t.equal(res.status, 401);
});
