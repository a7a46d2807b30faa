// Headers that choose which account a credential acts for (OpenAI-Organization, OpenAI-Project,
// Google's X-Goog-User-Project) decide who is billed. A caller does not choose that for Relay's
// host key: passthrough leaves the caller's out (the host's own `headers` may set them), and
// forwards them with the caller's own credential (proxy mode). Other client headers go on. The
// answer's account ids (OpenAI's organization and project, Anthropic's organization) go back only
// with the caller's own credential.
import t, { type Test } from 'tap';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: [{ use: 'auth-proxy', options: { prefixes: [] } }, ...DEFAULT_TEST_PLUGINS] });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gpt', upstreamModel: 'gpt-5', hostKeys: ['sk-host'] });
const claude = await seedRoute(relay, { baseUrl: up.url, adapter: 'anthropic', model: 'claude', upstreamModel: 'claude-sonnet-4-5', hostKeys: ['sk-ant-host'] });
await settled(relay, (s) => s.relayKeys.has(gpt.relayKeyId) && s.relayKeys.has(claude.relayKeyId));

const ACCOUNT = { 'openai-organization': 'org-other-team', 'openai-project': 'proj_other', 'x-goog-user-project': 'other-project' };
const body = JSON.stringify({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }] });

async function send(headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  await res.arrayBuffer();
  return res.status;
}

t.test("with Relay's host key, the caller's account headers stay behind; others go on", async (t) => {
  t.equal(await send({ authorization: `Bearer ${gpt.relayKey}`, ...ACCOUNT, 'x-stainless-os': 'Linux' }), 200);
  const seen = up.lastRequest()!.headers;
  t.equal(seen.authorization, 'Bearer sk-host');
  for (const name of Object.keys(ACCOUNT)) t.equal(seen[name], undefined, name);
  t.equal(seen['x-stainless-os'], 'Linux');
});

t.test("with the caller's own credential (proxy mode), the caller's account headers go on", async (t) => {
  t.equal(await send({ 'x-gw-api-key': gpt.relayKey, 'x-gw-proxy-mode': '1', authorization: 'Bearer sk-caller', ...ACCOUNT }), 200);
  const seen = up.lastRequest()!.headers;
  t.equal(seen.authorization, 'Bearer sk-caller', 'proxy mode was on');
  t.match(seen, ACCOUNT);
});

t.test("the host's own headers choose the account", async (t) => {
  const host = await relay.api('GET', `/api/hosts/${gpt.hostId}`);
  const put = await relay.api('PUT', `/api/hosts/by-id/${gpt.hostId}`, { spec: { ...host.body.spec, headers: { 'openai-organization': 'org-operator' } } });
  t.equal(put.status, 200, JSON.stringify(put.body));
  // The snapshot holds the value sealed (host-header-sealing.ts): wait for the header's name.
  await settled(relay, (s) => [...s.hosts.values()].some((h) => h.spec.headers?.['openai-organization'] !== undefined));
  t.equal(await send({ authorization: `Bearer ${gpt.relayKey}`, ...ACCOUNT }), 200);
  const seen = up.lastRequest()!.headers;
  t.equal(seen['openai-organization'], 'org-operator');
  t.equal(seen['openai-project'], undefined);
});

// The answer's account ids name the operator's vendor account: not for every caller of a host key.
const ANSWER_ACCOUNT = ['openai-organization', 'openai-project'];

async function answerHeaders(t: Test, headers: Record<string, string>, stream = false): Promise<Headers> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt', stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  t.equal(res.status, 200);
  return res.headers;
}

t.test("with Relay's host key, the answer's vendor account ids stay behind; its other headers go on", async (t) => {
  for (const stream of [false, true]) {
    const seen = await answerHeaders(t, { authorization: `Bearer ${gpt.relayKey}` }, stream);
    for (const name of ANSWER_ACCOUNT) t.equal(seen.get(name), null, `${name}, stream: ${stream}`);
    t.equal(seen.get('openai-processing-ms'), '42', `the vendor's other headers pass, stream: ${stream}`);
    t.equal(seen.get('x-ratelimit-remaining-requests'), '9999', `rate-limit headers pass, stream: ${stream}`);
  }
});

t.test("with the caller's own credential (proxy mode), the answer's account ids are the caller's and go back", async (t) => {
  const seen = await answerHeaders(t, { 'x-gw-api-key': gpt.relayKey, 'x-gw-proxy-mode': '1', authorization: 'Bearer sk-caller' });
  t.equal(seen.get('openai-organization'), 'org-fake');
  t.equal(seen.get('openai-project'), 'proj_fake');
});

t.test("with Relay's host key, Anthropic's organization id stays behind", async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': claude.relayKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  t.equal(res.status, 200);
  t.equal(res.headers.get('anthropic-organization-id'), null);
  t.equal(res.headers.get('content-type'), 'application/json', 'its other headers pass');
});
