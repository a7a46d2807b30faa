// Issue 38 item 3: a model the catalog marks `reasoning: false` gets no reasoning parameters
// upstream, whatever the client asks. A Codex request (Responses, reasoning.effort high) to an
// Anthropic upstream carried thinking {budget_tokens: 16384}; to a Chat Completions upstream it
// carries reasoning_effort. Real Relay; the fake upstreams record what they were sent.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const routes = [
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-plain', model_spec: { reasoning: false }, policy: { modelIds: '*' } }),
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-thinks', model_spec: { reasoning: true }, policy: { modelIds: '*' } }),
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'chat-plain', shapes: ['openai.chat'], model_spec: { reasoning: false }, policy: { modelIds: '*' } }),
  await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'chat-thinks', shapes: ['openai.chat'], model_spec: { reasoning: true }, policy: { modelIds: '*' } }),
];
await settled(relay, (s) => routes.every((r) => s.relayKeys.has(r.relayKeyId)) && s.models.size >= routes.length);
const key = routes[0]!.relayKey;

/** What the upstream received for a Codex-like Responses request to `model`. */
async function sent(model: string, stream: boolean): Promise<Record<string, unknown>> {
  const got = await viaRelay(relay, '/vendor-a/v1/responses', key, { model, stream, input: 'hi', reasoning: { effort: 'medium', summary: 'auto' } });
  t.equal(got.status, 200, `${model}: answered`);
  return up.lastRequest()!.json;
}

t.test('Anthropic upstream: no thinking for a model that does not reason', async (t) => {
  for (const stream of [false, true]) {
    const plain = await sent('claude-plain', stream);
    t.equal(plain.thinking, undefined, `stream ${stream}: no thinking`);
    t.equal(plain.max_tokens, 4096, 'and max_tokens without a budget in it');
    t.same((await sent('claude-thinks', stream)).thinking, { type: 'enabled', budget_tokens: 16384 }, 'a reasoning model still thinks');
  }
});

t.test('Chat Completions upstream: no reasoning_effort for a model that does not reason', async (t) => {
  const plain = await sent('chat-plain', false);
  t.notOk('reasoning_effort' in plain, 'no reasoning_effort');
  t.equal((await sent('chat-thinks', false)).reasoning_effort, 'medium', 'a reasoning model gets its effort');
});
