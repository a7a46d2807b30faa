// The real Claude Code through Relay while its Anthropic model is overloaded (every request a 529):
// Relay falls back to an OpenAI-shaped model (spec.fallbacks), translates each turn, and the
// session completes a Write tool round trip in the Messages shape it speaks (issue 42).
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { faults, startFakeUpstream } from '../support/fake-upstream.ts';
import { chatWriteScript, claudeWriteRound } from '../support/claude-write-round.ts';
import { settled, usageRecord } from '../support/relay-client.ts';

const relay = await startRelay({ plugins: DEFAULT_TEST_PLUGINS });
const claudeUp = await startFakeUpstream();
const gptUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
  await gptUp.close();
});
claudeUp.script((req) => (req.pathname === '/v1/messages' ? faults.serverError({ vendor: 'anthropic', status: 529 }) : undefined));
const gpt = await seedRoute(relay, { baseUrl: `${gptUp.url}/v1`, adapter: 'openai', model: 'gpt-fallback' });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'claude-primary' });
await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { modelIds: [claude.modelId, gpt.modelId] } });
await relay.api('PUT', `/api/models/by-id/${claude.modelId}`, { spec: { fallbacks: [{ modelId: gpt.modelId }] } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.policies.get(claude.policyId)?.spec.modelIds.length === 2
  && s.models.get(claude.modelId)?.spec.fallbacks?.length === 1 && s.hostKeysOfHost(claude.hostId).length === 1 && s.hostKeysOfHost(gpt.hostId).length === 1);

t.test('claude -p: the Anthropic model answers 529, the OpenAI fallback completes a Write tool round trip', async (t) => {
  await claudeWriteRound(t, { inferenceUrl: relay.inferenceUrl, relayKey: claude.relayKey, model: 'claude-primary', prepare: (file) => gptUp.script(chatWriteScript(file)) });

  const asked = claudeUp.requests.filter((r) => r.pathname === '/v1/messages');
  const served = gptUp.requests.filter((r) => r.pathname === '/v1/chat/completions');
  t.ok(asked.length >= 1, `the Anthropic model was asked (${asked.length})`);
  t.ok(served.length >= 2, `the OpenAI fallback served the tool call and the final turn (${served.length})`);
  t.ok(served.some((r) => (r.json as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool')), 'the tool result came back to the fallback');
  const last = served.at(-1)!;
  const record = await usageRecord(relay, String(last.headers['x-request-id']));
  t.equal(record.model_requested, 'claude-primary');
  t.equal(record.extras.relay_served_model, 'gpt-fallback');
});
