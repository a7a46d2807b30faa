// A host's base URL with or without /v1 (issue 39 #8): the Anthropic adapter takes the origin as
// Anthropic's SDKs do, or .../v1; the OpenAI adapter takes .../v1, or a bare origin (given /v1).
// A base URL that ends with an endpoint is refused when the host is written, naming /spec/baseUrl.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

async function lastPathAfter(call: () => Promise<Response>): Promise<{ status: number; path: string | undefined }> {
  up.reset();
  const res = await call();
  await res.arrayBuffer();
  return { status: res.status, path: up.lastRequest()?.pathname };
}

for (const [label, suffix] of [['the origin', ''], ['the origin with a slash', '/'], ['.../v1', '/v1'], ['.../v1/', '/v1/']] as const) {
  t.test(`anthropic host at ${label}: requests reach /v1/messages`, async (t) => {
    const model = `claude-${label.replace(/[^a-z0-9]+/g, '-')}`;
    const seeded = await seedRoute(relay, { baseUrl: `${up.url}${suffix}`, adapter: 'anthropic', model });
    await routeLive(relay, seeded);
    const headers = { 'x-api-key': seeded.relayKey, 'content-type': 'application/json' };
    const messages = await lastPathAfter(() => fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
      method: 'POST', headers, body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    }));
    t.same(messages, { status: 200, path: '/v1/messages' });
    const count = await lastPathAfter(() => fetch(`${relay.inferenceUrl}/vendor-b/v1/messages/count_tokens`, {
      method: 'POST', headers, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    }));
    t.same(count, { status: 200, path: '/v1/messages/count_tokens' });
  });
}

for (const [label, suffix] of [['the bare origin', ''], ['.../v1', '/v1']] as const) {
  t.test(`openai host at ${label}: requests reach /v1/chat/completions`, async (t) => {
    const model = `gpt-${label.replace(/[^a-z0-9]+/g, '-')}`;
    const seeded = await seedRoute(relay, { baseUrl: `${up.url}${suffix}`, adapter: 'openai', model });
    await routeLive(relay, seeded);
    const chat = await lastPathAfter(() => fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    }));
    t.same(chat, { status: 200, path: '/v1/chat/completions' });
  });
}

t.test('a base URL ending with an endpoint is refused on write, naming the field', async (t) => {
  const provider = async (adapter: string) => (await relay.api('POST', '/api/providers', { metadata: { displayName: `${adapter} for urls` }, spec: { adapter } })).body.metadata.id as string;
  const anthropic = await provider('anthropic');
  const openai = await provider('openai');
  const cases: Array<[string, string, RegExp]> = [
    [anthropic, 'https://api.anthropic.com/v1/messages', /^\/spec\/baseUrl: ends with the endpoint \/messages: give the base URL, e\.g\. https:\/\/api\.anthropic\.com \(with or without \/v1\)/],
    [anthropic, 'https://api.anthropic.com/v1/messages/count_tokens/', /ends with the endpoint \/messages\/count_tokens/],
    [openai, 'https://api.openai.com/v1/chat/completions', /^\/spec\/baseUrl: ends with the endpoint \/chat\/completions: give the base URL, e\.g\. https:\/\/api\.openai\.com\/v1/],
    [openai, 'http://vllm:8000/v1/responses', /ends with the endpoint \/responses/],
  ];
  for (const [providerId, baseUrl, message] of cases) {
    const res = await relay.api('POST', '/api/hosts', { metadata: { displayName: 'bad url' }, spec: { providerId, baseUrl } });
    t.equal(res.status, 400, baseUrl);
    t.match(res.body.error, { field: '/spec/baseUrl', message }, baseUrl);
  }
  const good = await relay.api('POST', '/api/hosts', { metadata: { displayName: 'good url' }, spec: { providerId: anthropic, baseUrl: 'https://api.anthropic.com' } });
  t.equal(good.status, 201);
  const moved = await relay.api('PUT', `/api/hosts/by-id/${good.body.metadata.id}`, { spec: { baseUrl: 'https://api.anthropic.com/v1/messages' } });
  t.equal(moved.status, 400, 'an update is checked too');
  t.match(moved.body.error, { field: '/spec/baseUrl' });
});
