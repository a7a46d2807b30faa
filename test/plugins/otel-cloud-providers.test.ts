// The otel plugin's spans for models bought through clouds, against the fake clouds and a real OTLP
// receiver: gen_ai.provider.name is the conventions' name of the platform that served the call
// (gcp.vertex_ai for Vertex AI, Gemini and Claude alike; gcp.gemini for the Gemini API;
// aws.bedrock), and a Bedrock call's server.address is the runtime it went to, not the host's
// unused baseUrl.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay, type Seeded } from '../../core/testing.ts';
import { serviceAccountKey, startFakeGoogle } from '../support/fake-google.ts';
import { startFakeBedrock } from '../support/fake-bedrock.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';
import { startOtlpHttpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
const CLIENT = 3;

const API_KEY = 'AIza-otel-cloud-key';
const account = serviceAccountKey();
const AWS = { accessKeyId: 'AKIAOTELCLOUD0001', secretAccessKey: 'otel/Secret+Key0123456789abcdefghijk' };

const receiver = await startOtlpHttpReceiver();
const google = await startFakeGoogle({ apiKey: API_KEY, serviceAccounts: [account] });
const bedrock = await startFakeBedrock({ keys: [AWS], region: 'eu-west-1' });
const relay = await startRelay({
  plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-google' }, { use: 'vendor-bedrock' }, { use: 'otel', options: { endpoint: receiver.url, sampleRatio: 1 } }],
});
t.teardown(async () => {
  await relay.close();
  await Promise.all([receiver.close(), google.close(), bedrock.close()]);
});

const vertex = { mode: 'vertex', project: 'acme-prod', location: 'us-central1', tokenUrl: `${google.url}/token` };
const geminiApi = await seedRoute(relay, { baseUrl: `${google.url}/v1beta`, adapter: 'google', model: 'otel-gemini-api', upstreamModel: 'gemini-2.5-flash', hostKeys: [API_KEY] });
const vertexGemini = await seedRoute(relay, { baseUrl: `${google.url}/v1`, adapter: 'google', model: 'otel-vertex-gemini', upstreamModel: 'gemini-2.5-flash', hostKeys: [account.json], hostOptions: vertex });
const vertexClaude = await seedRoute(relay, {
  baseUrl: `${google.url}/v1`, adapter: 'vertex-anthropic', model: 'otel-vertex-claude', upstreamModel: 'claude-sonnet-4-5@20250929', hostKeys: [account.json], hostOptions: { ...vertex, location: 'us-east5' },
});
// The baseUrl names another region: Bedrock sends to its options' endpoint, and so must the span say.
const onBedrock = await seedRoute(relay, {
  baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', adapter: 'bedrock', model: 'otel-bedrock', upstreamModel: 'amazon.nova-pro-v1:0',
  hostKeys: [`${AWS.accessKeyId}:${AWS.secretAccessKey}`], hostOptions: { region: 'eu-west-1', endpoint: bedrock.url }, shapes: ['bedrock.converse'],
});
for (const seeded of [geminiApi, vertexGemini, vertexClaude, onBedrock]) await routeLive(relay, seeded);

/** The upstream call's span of one request sent with a traceparent of its own. */
async function clientSpan(seeded: Seeded, path: string, body: Record<string, unknown>): Promise<ReceivedSpan> {
  const trace = randomBytes(16).toString('hex');
  const res = await viaRelay(relay, path, seeded.relayKey, body, { traceparent: `00-${trace}-${randomBytes(8).toString('hex')}-01`, 'anthropic-version': '2023-06-01' });
  if (res.status !== 200) throw new Error(`${seeded.modelSlug}: ${res.status} ${res.text}`);
  await eventually(() => receiver.spans.some((s) => s.traceId === trace && s.kind === CLIENT), 5_000, 20);
  return receiver.spans.find((s) => s.traceId === trace && s.kind === CLIENT)!;
}
const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });

t.test('Gemini on Vertex AI is gcp.vertex_ai, on the Gemini API gcp.gemini', async (t) => {
  t.equal((await clientSpan(vertexGemini, '/vendor-a/v1/chat/completions', chat(vertexGemini.modelSlug))).attributes['gen_ai.provider.name'], 'gcp.vertex_ai');
  const api = await clientSpan(geminiApi, '/vendor-a/v1/chat/completions', chat(geminiApi.modelSlug));
  t.equal(api.attributes['gen_ai.provider.name'], 'gcp.gemini');
  t.equal(api.attributes['gen_ai.system'], 'gcp.gemini', 'the older name too');
});

t.test('Claude on Vertex AI is gcp.vertex_ai, not the adapter id', async (t) => {
  const span = await clientSpan(vertexClaude, '/vendor-b/v1/messages', { ...chat(vertexClaude.modelSlug), max_tokens: 16 });
  t.equal(span.attributes['gen_ai.provider.name'], 'gcp.vertex_ai');
});

t.test('a Bedrock call names the runtime it went to (the endpoint option), not the unused baseUrl', async (t) => {
  const span = await clientSpan(onBedrock, '/vendor-a/v1/chat/completions', chat(onBedrock.modelSlug));
  t.equal(span.attributes['gen_ai.provider.name'], 'aws.bedrock');
  const endpoint = new URL(bedrock.url);
  t.equal(span.attributes['server.address'], endpoint.hostname);
  t.equal(span.attributes['server.port'], Number(endpoint.port));
});
