// Failover across vendors before the first byte: a model bound to an Azure OpenAI deployment
// (tried first) and to an OpenAI-compatible host. Azure opens its streams with a chunk of prompt
// filter results and no output; an error right after it must still fail over (the chunk is an
// opening frame, not output), for a passthrough client and a translated one.
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { setBindingWeights, settled, viaRelay } from '../support/relay-client.ts';
import { parseSse } from '../support/fake-upstream.ts';
import { PROMPT_ANNOTATION_CHUNK } from '../translation/fixtures/azure.ts';

const API_KEY = 'azure-key-failover';
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-azure-openai' }], database: 'pglite' });
const behindAzure = await startFakeUpstream();
const azure = await startFakeAzure({ apiKey: API_KEY, deployments: { 'gpt-4o-prod': 'gpt-4o' }, backend: behindAzure.url });
const other = await startFakeUpstream({ text: 'Answered by the other vendor.', chunks: 2 });
t.teardown(async () => {
  await relay.close();
  await azure.close();
  await behindAzure.close();
  await other.close();
});

const onAzure = await seedRoute(relay, { baseUrl: azure.url, adapter: 'azure-openai', model: 'gpt-4o', upstreamModel: 'gpt-4o-prod', hostKeys: [API_KEY] });
const onOther = await seedRoute(relay, { baseUrl: `${other.url}/v1`, adapter: 'openai', model: 'gpt-4o', upstreamModel: 'gpt-4o' });
await setBindingWeights(relay, onAzure.modelId, { [onAzure.hostId]: 1000, [onOther.hostId]: 1 });
await settled(relay, (s) => s.relayKeys.has(onAzure.relayKeyId) && s.models.get(onAzure.modelId)?.spec.bindings.find((b) => b.hostId === onAzure.hostId)?.weight === 1000);

/** Azure's stream: the prompt annotation, then an in-stream error before any output. */
const failingStream = () => ({
  headers: { 'content-type': 'text/event-stream' },
  // Apart in time, so the annotation is read (and judged) before the error arrives.
  delayMs: 150,
  frames: [`data: ${JSON.stringify(PROMPT_ANNOTATION_CHUNK)}\n\n`, `data: ${JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error', code: null } })}\n\n`],
});

t.test('passthrough client: the annotation chunk does not commit the stream; the other vendor answers', async (t) => {
  behindAzure.enqueue(failingStream());
  const azureBefore = azure.requests.length;
  const otherBefore = other.count;
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', onAzure.relayKey, { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 200);
  t.equal(azure.requests.length - azureBefore, 1, 'Azure was tried first');
  t.equal(other.count - otherBefore, 1, 'then the other vendor');
  t.notMatch(got.text, /prompt_filter_results|server had an error/, "nothing of Azure's attempt reaches the client");
  t.match(got.text, /other vendor/);
});

t.test('translated client (Anthropic): fails over the same way', async (t) => {
  behindAzure.enqueue(failingStream());
  const otherBefore = other.count;
  const got = await viaRelay(relay, '/vendor-b/v1/messages', onAzure.relayKey, { model: 'gpt-4o', stream: true, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 200);
  t.equal(other.count - otherBefore, 1, 'the other vendor answered');
  const events = parseSse(got.text).map((f) => f.event);
  t.notOk(events.includes('error'), 'no error event reaches the client');
  t.equal(events.at(-1), 'message_stop');
});
