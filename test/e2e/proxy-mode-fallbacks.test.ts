// Proxy mode sends the caller's own vendor credential upstream. A fallback must not carry it to a
// host the requested model is not bound to: a third party on the same wire, or another vendor.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, faults } from '../support/fake-upstream.ts';
import { settled, usageRecord } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS, { use: 'vendor-bedrock' }] });
const anthropicUp = await startFakeUpstream();
const thirdPartyUp = await startFakeUpstream();
const bedrockUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await anthropicUp.close();
  await thirdPartyUp.close();
  await bedrockUp.close();
});

// The requested model's host answers 529 for it; a second model on the same host answers.
anthropicUp.script((req) => (req.json?.model === 'claude-primary' ? faults.serverError({ vendor: 'anthropic', status: 529 }) : undefined));
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'claude-primary' });
const thirdParty = await seedRoute(relay, { baseUrl: `${thirdPartyUp.url}/v1`, adapter: 'anthropic', model: 'third-party-fallback', upstreamModel: 'kimi-k2' });
const bedrock = await seedRoute(relay, {
  baseUrl: bedrockUp.url, adapter: 'bedrock', model: 'bedrock-fallback', upstreamModel: 'anthropic.claude-sonnet-4-5',
  hostKeys: ['AKIAEXAMPLEEXAMPLE:secretsecretsecretsecret'], hostOptions: { region: 'us-east-1', endpoint: bedrockUp.url },
});
const sameHost = (await relay.api<any>('POST', '/api/models', {
  metadata: { displayName: 'same-host-fallback', slug: 'same-host-fallback' },
  spec: { bindings: [{ hostId: claude.hostId, upstreamModel: 'claude-backup' }] },
})).body;
const granted = [claude.modelId, thirdParty.modelId, bedrock.modelId, sameHost.metadata.id];
await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { modelIds: granted } });

async function setFallbacks(modelIds: string[]): Promise<void> {
  await relay.api('PUT', `/api/models/by-id/${claude.modelId}`, { spec: { fallbacks: modelIds.map((modelId) => ({ modelId })) } });
  await settled(relay, (s) => s.models.get(claude.modelId)?.spec.fallbacks?.length === modelIds.length
    && s.policies.get(claude.policyId)?.spec.modelIds.length === granted.length && s.models.has(sameHost.metadata.id));
}

const USER_KEY = 'sk-ant-api03-USERS-OWN-KEY';
const USER_TOKEN = 'sk-ant-oat01-USERS-OAUTH-TOKEN';

async function proxyRequest(): Promise<{ status: number; text: string; requestId: string }> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', 'anthropic-version': '2023-06-01',
      'x-gw-api-key': claude.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': USER_KEY, authorization: `Bearer ${USER_TOKEN}`,
    },
    body: JSON.stringify({ model: 'claude-primary', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id')! };
}

t.test('fallbacks on other hosts are skipped; the one on the same host answers with the caller\'s credential', async (t) => {
  await setFallbacks([thirdParty.modelId, bedrock.modelId, sameHost.metadata.id]);
  const before = anthropicUp.requests.length;
  const res = await proxyRequest();
  t.equal(res.status, 200, res.text);
  t.equal(thirdPartyUp.requests.length, 0, 'the third party on the same wire never got a request');
  t.equal(bedrockUp.requests.length, 0, 'nor did Bedrock');
  const sent = anthropicUp.requests.slice(before);
  t.same(sent.map((r) => r.json?.model), ['claude-primary', 'claude-backup'], 'the requested model, then the fallback on its host');
  t.equal(sent[1].headers['x-api-key'], USER_KEY, 'the caller\'s credential went to its own host');
  const record = await usageRecord(relay, res.requestId);
  t.same(JSON.parse(record.extras.relay_model_attempts), [
    { model: 'claude-primary', outcome: 'server_error' },
    { model: 'third-party-fallback', outcome: 'other_host' },
    { model: 'bedrock-fallback', outcome: 'other_host' },
    { model: 'same-host-fallback' },
  ], 'each skip is recorded with its reason');
});

t.test('with only other hosts to fall back to, the client gets the exhausted error and no credential leaves', async (t) => {
  await setFallbacks([thirdParty.modelId, bedrock.modelId]);
  const res = await proxyRequest();
  t.ok(res.status >= 500 && res.status < 600, `an upstream failure (${res.status}), not a fallback's answer`);
  t.notMatch(res.text, USER_KEY);
  t.equal(thirdPartyUp.requests.length, 0);
  t.equal(bedrockUp.requests.length, 0);
});

t.test('without proxy mode, the same fallbacks are tried with the operator\'s host keys', async (t) => {
  await setFallbacks([thirdParty.modelId]);
  thirdPartyUp.script(undefined);
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': claude.relayKey },
    body: JSON.stringify({ model: 'claude-primary', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200, await res.text());
  t.equal(thirdPartyUp.requests.length, 1, 'the fallback answered');
  t.not(thirdPartyUp.requests[0].headers['x-api-key'], USER_KEY);
});
