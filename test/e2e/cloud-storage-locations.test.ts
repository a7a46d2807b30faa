// Media a cloud upstream reads with the host's own identity (SECURITY.md row 40): an s3:// image
// Bedrock would read with Relay's AWS role, a gs:// object or a Gemini API file Gemini would read
// under the host's project. Any caller of the host could name another team's object; such a URL
// passes only under a prefix the host's storageLocations lists, and the upstream never hears of
// one it does not.
import t, { type Test } from 'tap';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay, type Seeded } from '../../core/testing.ts';
import { startFakeBedrock } from '../support/fake-bedrock.ts';
import { startFakeGoogle } from '../support/fake-google.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';

const KEY = { accessKeyId: 'AKIAE2ESTORAGE00001', secretAccessKey: 'e2e/Storage+Key0123456789abcdefghijklmno' };
const REGION = 'eu-west-1';
const API_KEY = 'AIza-storage-host-key';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-bedrock' }, { use: 'vendor-google' }] });
const bedrock = await startFakeBedrock({ keys: [KEY], region: REGION });
const google = await startFakeGoogle({ apiKey: API_KEY, text: 'seen', chunks: 1 });
t.teardown(async () => {
  await relay.close();
  await bedrock.close();
  await google.close();
});

async function seeded(options: Parameters<typeof seedRoute>[1]): Promise<Seeded> {
  const route = await seedRoute(relay, options);
  await routeLive(relay, route);
  return route;
}

const bedrockRoute = (model: string, storageLocations?: string[]) => seeded({
  baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model, upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  hostKeys: [`${KEY.accessKeyId}:${KEY.secretAccessKey}`], hostOptions: { region: REGION, endpoint: bedrock.url, ...(storageLocations ? { storageLocations } : {}) },
  // Converse only, so that Messages clients are translated too (InvokeModel passes their bodies through).
  shapes: ['bedrock.converse'],
});
const geminiRoute = (model: string, storageLocations?: string[]) => seeded({
  baseUrl: `${google.url}/v1beta`, adapter: 'google', model, upstreamModel: 'models/gemini-2.5-flash', hostKeys: [API_KEY],
  ...(storageLocations ? { hostOptions: { storageLocations } } : {}),
});

const withImage = (model: string, url: string) => ({
  model, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url } }] }],
});
const withDocument = (model: string, url: string) => ({
  model, max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url } }, { type: 'text', text: 'summarize' }] }],
});

async function refused(t: Test, route: Seeded, body: unknown, sent: () => number, path = '/vendor-a/v1/chat/completions') {
  const before = sent();
  const res = await viaRelay(relay, path, route.relayKey, body);
  t.equal(res.status, 403, res.text);
  t.equal(res.headers.get('x-relay-error-code'), 'RELAY_ERR_FORBIDDEN');
  t.match(res.text, /storageLocations/, 'names the host option');
  t.equal(sent(), before, 'the upstream never heard of it');
}

t.test('Bedrock: an s3:// image is refused unless the host lists its prefix', async (t) => {
  const sent = () => bedrock.requests.length;
  const closed = await bedrockRoute('bedrock-closed');
  await refused(t, closed, withImage(closed.modelSlug, 's3://team-b-private/payroll.png'), sent);
  await refused(t, closed, withDocument(closed.modelSlug, 's3://team-b-private/board-minutes.pdf'), sent, '/vendor-b/v1/messages');

  const open = await bedrockRoute('bedrock-team-a', ['s3://team-a/inputs/']);
  const before = sent();
  const ok = await viaRelay(relay, '/vendor-a/v1/chat/completions', open.relayKey, withImage(open.modelSlug, 's3://team-a/inputs/cat.png'));
  t.equal(ok.status, 200, ok.text);
  t.equal(sent(), before + 1);
  const blocks = (bedrock.requests.at(-1)!.body.messages as Array<{ content: Array<Record<string, any>> }>)[0].content;
  t.same(blocks.find((b) => b.image)?.image.source, { s3Location: { uri: 's3://team-a/inputs/cat.png' } }, 'a listed location reaches Converse');

  for (const url of ['s3://team-a/other/cat.png', 's3://team-a-evil/inputs/cat.png', 's3://team-a/inputs/../../team-b-private/payroll.png', 's3://team-a/inputs/%2e%2e/secret.png']) {
    await refused(t, open, withImage(open.modelSlug, url), sent);
  }
});

t.test('Gemini: gs:// objects and Gemini API files are refused unless listed; a public URL passes', async (t) => {
  const sent = () => google.requests.length;
  const closed = await geminiRoute('gemini-closed');
  await refused(t, closed, withImage(closed.modelSlug, 'gs://team-b-private/payroll.png'), sent);
  await refused(t, closed, withImage(closed.modelSlug, 'https://generativelanguage.googleapis.com/v1beta/files/abc123'), sent);
  await refused(t, closed, withImage(closed.modelSlug, 'HTTPS://GenerativeLanguage.GoogleAPIs.com./v1beta/files/abc123'), sent);
  await refused(t, closed, withDocument(closed.modelSlug, 'gs://team-b-private/board-minutes.pdf'), sent, '/vendor-b/v1/messages');

  const before = sent();
  const pub = await viaRelay(relay, '/vendor-a/v1/chat/completions', closed.relayKey, withImage(closed.modelSlug, 'https://example.com/cat.png'));
  t.equal(pub.status, 200, pub.text);
  t.equal(sent(), before + 1, 'a public URL is for Gemini to fetch as anyone would');

  const open = await geminiRoute('gemini-team-a', ['gs://team-a/']);
  const listed = await viaRelay(relay, '/vendor-a/v1/chat/completions', open.relayKey, withImage(open.modelSlug, 'gs://team-a/cat.png'));
  t.equal(listed.status, 200, listed.text);
  const parts = (google.requests.at(-1)!.json as { contents: Array<{ parts: Array<Record<string, any>> }> }).contents[0].parts;
  t.equal(parts.find((p) => p.fileData)?.fileData.fileUri, 'gs://team-a/cat.png');
  await refused(t, open, withImage(open.modelSlug, 'gs://team-ab/cat.png'), sent);
});

t.test('storageLocations is checked on every host write', async (t) => {
  const provider = await relay.api('POST', '/api/providers', { metadata: { displayName: 'storage options' }, spec: { adapter: 'bedrock' } });
  const host = (storageLocations: unknown) => relay.api('POST', '/api/hosts', {
    metadata: { displayName: `storage host ${Math.random()}` },
    spec: { providerId: provider.body.metadata.id, baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', options: { region: 'us-east-1', storageLocations } },
  });
  for (const bad of [['s3://team-a'], ['https://team-a.s3.amazonaws.com/'], ['s3://team-a/x?y/']]) {
    const res = await host(bad);
    t.equal(res.status, 400, JSON.stringify(bad));
    t.match(JSON.stringify(res.body), /\/spec\/options\/storageLocations\/0/);
  }
  t.equal((await host(['s3://team-a/', 's3://shared.docs/2026/'])).status, 201);
});
