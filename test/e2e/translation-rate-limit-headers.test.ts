// Issue 38 item 8: translated answers carry the upstream's rate-limit headers in the client's
// vendor's names (core/pipeline/rate-limit-headers.ts), and retry-after always: OpenAI's
// x-ratelimit-* to a Messages client as anthropic-ratelimit-*, Anthropic's to an OpenAI client as
// x-ratelimit-*, on JSON answers, streams and errors. Real Relay, fake upstreams over HTTP.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const OPENAI_LIMITS = {
  'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '499', 'x-ratelimit-reset-requests': '1m30s',
  'x-ratelimit-limit-tokens': '30000', 'x-ratelimit-remaining-tokens': '29000', 'x-ratelimit-reset-tokens': '120ms',
};
const RESET_AT = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const ANTHROPIC_LIMITS = {
  'anthropic-ratelimit-requests-limit': '50', 'anthropic-ratelimit-requests-remaining': '49', 'anthropic-ratelimit-requests-reset': RESET_AT,
  'anthropic-ratelimit-tokens-limit': '80000', 'anthropic-ratelimit-tokens-remaining': '79000', 'anthropic-ratelimit-tokens-reset': RESET_AT,
  'anthropic-ratelimit-input-tokens-limit': '40000',
};

let failNext = false;
up.script((req) => {
  const model = String(req.json?.model);
  const stream = req.json?.stream === true;
  if (req.pathname === '/v1/messages') {
    const headers = { ...ANTHROPIC_LIMITS, ...(failNext ? { 'retry-after': '7' } : {}) };
    if (failNext) return { status: 429, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(anthropic.error('rate_limit_error', 'slow down')) };
    return stream
      ? { headers: { ...headers, 'content-type': 'text/event-stream' }, frames: anthropic.events({ model }) }
      : { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(anthropic.message({ model })) };
  }
  const headers = { ...OPENAI_LIMITS, 'retry-after': '3' };
  return stream
    ? { headers: { ...headers, 'content-type': 'text/event-stream' }, frames: openai.chatChunks({ model, includeUsage: true }) }
    : { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model })) };
});

const routes = [
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'chat-up', shapes: ['openai.chat'], policy: { modelIds: '*' } }),
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-up', policy: { modelIds: '*' } }),
];
await settled(relay, (s) => routes.every((r) => s.relayKeys.has(r.relayKeyId)) && s.models.size >= 2);
const key = routes[0]!.relayKey;

t.test('OpenAI upstream -> Messages client: anthropic-ratelimit-* and retry-after', async (t) => {
  for (const stream of [false, true]) {
    const before = Date.now();
    const got = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: 'chat-up', stream, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(got.status, 200);
    const h = got.headers;
    t.equal(h.get('anthropic-ratelimit-requests-limit'), '500', `stream ${stream}: requests limit`);
    t.equal(h.get('anthropic-ratelimit-requests-remaining'), '499');
    t.equal(h.get('anthropic-ratelimit-tokens-limit'), '30000');
    t.equal(h.get('anthropic-ratelimit-tokens-remaining'), '29000');
    const reset = Date.parse(h.get('anthropic-ratelimit-requests-reset') ?? '');
    t.ok(reset >= before + 89_000 && reset <= Date.now() + 91_000, `the 1m30s reset is a time about 90 s ahead (${h.get('anthropic-ratelimit-requests-reset')})`);
    t.match(h.get('anthropic-ratelimit-tokens-reset'), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'RFC 3339 in whole seconds');
    t.equal(h.get('retry-after'), '3');
    t.equal(h.get('x-ratelimit-limit-requests'), null, "not OpenAI's names");
  }
});

t.test('Anthropic upstream -> OpenAI chat client: x-ratelimit-*; input-token limits have no OpenAI name', async (t) => {
  for (const stream of [false, true]) {
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'claude-up', stream, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(got.status, 200);
    const h = got.headers;
    t.equal(h.get('x-ratelimit-limit-requests'), '50', `stream ${stream}: requests limit`);
    t.equal(h.get('x-ratelimit-remaining-requests'), '49');
    t.equal(h.get('x-ratelimit-limit-tokens'), '80000');
    t.equal(h.get('x-ratelimit-remaining-tokens'), '79000');
    t.match(h.get('x-ratelimit-reset-requests'), /^(59m[0-9.]+s|1h0m0s)$/, `a duration about an hour (${h.get('x-ratelimit-reset-requests')})`);
    t.equal(h.get('anthropic-ratelimit-requests-limit'), null, "not Anthropic's names");
    t.equal(h.get('anthropic-ratelimit-input-tokens-limit'), null);
  }
});

t.test('an upstream 429 passed on to the client carries retry-after and the limits', async (t) => {
  failNext = true;
  t.teardown(() => { failNext = false; });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, { model: 'claude-up', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 429);
  t.equal(got.headers.get('retry-after'), '7');
  t.equal(got.headers.get('x-ratelimit-remaining-requests'), '49');
});

t.test('canonical client: the upstream headers as sent', async (t) => {
  const got = await viaRelay(relay, '/v1/generate', key, { model: 'chat-up', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  t.equal(got.status, 200);
  t.equal(got.headers.get('x-ratelimit-reset-requests'), '1m30s');
  t.equal(got.headers.get('retry-after'), '3');
});
