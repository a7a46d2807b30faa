// The real Claude Code through Relay to an Azure OpenAI deployment (vendor-azure-openai): its
// Messages requests are translated to Chat Completions at the deployment URL with the api-key
// header, and the turn completes a Write tool round trip (the model's answers come from a
// scripted fake behind the fake Azure resource).
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { chatWriteScript, claudeWriteRound } from '../support/claude-write-round.ts';

const API_KEY = 'azure-key-for-claude-code';
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }] });
const model = await startFakeUpstream();
const azure = await startFakeAzure({ apiKey: API_KEY, deployments: { 'gpt-4o-prod': 'gpt-4o' }, backend: model.url });
t.teardown(async () => {
  await relay.close();
  await azure.close();
  await model.close();
});
const seeded = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'claude-azure', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY] });
await eventually(() => relay.relay.sync.snapshot().relayKeys.has(seeded.relayKeyId));

t.test('claude -p -> Relay -> Azure OpenAI deployment (translated): a Write tool round trip', async (t) => {
  await claudeWriteRound(t, { inferenceUrl: relay.inferenceUrl, relayKey: seeded.relayKey, model: 'claude-azure', prepare: (file) => model.script(chatWriteScript(file)) });
  const calls = azure.requests.filter((r) => r.path === '/openai/deployments/gpt-4o-prod/chat/completions');
  t.ok(calls.length >= 2, 'the tool call and the final turn reached the deployment');
  for (const call of calls) {
    t.equal(call.query.get('api-version'), '2024-10-21');
    t.equal(call.headers['api-key'], API_KEY, 'the host key as api-key');
    t.notOk(JSON.stringify(call.headers).includes(seeded.relayKey), 'the relay key never reaches Azure');
  }
  t.ok(calls.some((c) => (JSON.parse(c.body) as { messages: Array<{ role: string }> }).messages.some((m) => m.role === 'tool')), 'the tool result came back as a tool message');
});
