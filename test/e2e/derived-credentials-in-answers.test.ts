// Credentials Relay makes from a host key and sends (a Bedrock access key id and session token,
// a Vertex OAuth token, an Entra ID token) never reach the caller when an upstream quotes them
// back: in an error body passed through or translated, or in a stream's output. The fakes speak
// each vendor's real wire (SigV4 verified, tokens issued by their token endpoints).
import t from 'tap';
import type { ServerResponse } from 'node:http';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { invokeChunk, startFakeBedrock, type BedrockRequest, type BedrockScript } from '../support/fake-bedrock.ts';
import { serviceAccountKey, startFakeGoogle } from '../support/fake-google.ts';
import { startFakeAzure } from '../support/fake-azure.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { routeLive, viaRelay } from '../support/relay-client.ts';

const KEY = { accessKeyId: 'AKIAE2EDERIVED000001', secretAccessKey: 'derived/Secret+Key0123456789abcdefghijkl', sessionToken: 'IQoJb3JpZ2luX2VjEDerivedSessionToken/0123456789+abcdefghijklmnop' };
const REGION = 'us-east-1';
const account = serviceAccountKey();
const ENTRA = { tenantId: 'tenant-derived', clientId: 'client-derived', clientSecret: 'entra~derived~secret~0123456789' };

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-bedrock' }, { use: 'vendor-google' }, { use: 'vendor-azure-openai' }] });
const bedrock = await startFakeBedrock({ keys: [KEY], region: REGION });
const google = await startFakeGoogle({ serviceAccounts: [account] });
const azureBackend = await startFakeUpstream();
const azure = await startFakeAzure({ entra: ENTRA, backend: azureBackend.url });
t.teardown(async () => {
  await relay.close();
  await Promise.all([bedrock.close(), google.close(), azure.close(), azureBackend.close()]);
});

const bedrockRoute = await seedRoute(relay, {
  baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model: 'derived-bedrock', upstreamModel: 'anthropic.claude-sonnet-4-5',
  hostKeys: [`${KEY.accessKeyId}:${KEY.secretAccessKey}:${KEY.sessionToken}`], hostOptions: { region: REGION, endpoint: bedrock.url },
});
const vertexOptions = { mode: 'vertex', project: 'acme', location: 'us-east5', tokenUrl: `${google.url}/token` };
const vertexClaude = await seedRoute(relay, { baseUrl: `${google.url}/v1`, adapter: 'vertex-anthropic', model: 'derived-vertex-claude', upstreamModel: 'claude-sonnet-4-5', hostKeys: [account.json], hostOptions: vertexOptions });
const vertexGemini = await seedRoute(relay, { baseUrl: `${google.url}/v1`, adapter: 'google', model: 'derived-vertex-gemini', upstreamModel: 'gemini-2.5-pro', hostKeys: [account.json], hostOptions: vertexOptions });
const entra = await seedRoute(relay, {
  baseUrl: azure.url, adapter: 'azure-openai', model: 'derived-entra', upstreamModel: 'gpt-4o-prod', hostKeys: [ENTRA.clientSecret],
  hostOptions: { entra: { tenantId: ENTRA.tenantId, clientId: ENTRA.clientId, tokenUrl: `${azure.url}/${ENTRA.tenantId}/oauth2/v2.0/token` } },
});
for (const r of [bedrockRoute, vertexClaude, vertexGemini, entra]) await routeLive(relay, r);

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string, stream = false) => ({ model, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });

function bedrockOnce(answer: BedrockScript): void {
  let used = false;
  bedrock.script((req) => {
    if (used) return undefined;
    used = true;
    return answer(req);
  });
}

t.test('Bedrock: the access key id and session token a signed request carried are masked', async (t) => {
  const quoted = (req: BedrockRequest) => `The security token ${String(req.headers['x-amz-security-token'])} of ${KEY.accessKeyId} is not valid for this model`;

  bedrockOnce((req) => ({ kind: 'json', status: 400, errorType: 'ValidationException', body: { message: quoted(req) } }));
  const passed = await viaRelay(relay, '/vendor-b/v1/messages', bedrockRoute.relayKey, messages('derived-bedrock'));
  t.equal(passed.status, 400, passed.text);
  t.match(passed.text, /The security token .* is not valid/, 'the error still reaches the caller (Messages, passed through)');
  t.notMatch(passed.text, KEY.sessionToken);
  t.notMatch(passed.text, KEY.accessKeyId);

  bedrockOnce((req) => ({ kind: 'json', status: 400, errorType: 'ValidationException', body: { message: quoted(req) } }));
  const translated = await viaRelay(relay, '/vendor-a/v1/chat/completions', bedrockRoute.relayKey, chat('derived-bedrock'));
  t.equal(translated.status, 400, translated.text);
  t.match(translated.text, /is not valid for this model/, 'the error still reaches the caller (Chat, translated)');
  t.notMatch(translated.text, KEY.sessionToken);
  t.notMatch(translated.text, KEY.accessKeyId);

  bedrockOnce((req) => ({
    kind: 'events', chunkBytes: 40, messages: [
      invokeChunk({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } }),
      invokeChunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      invokeChunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `Your token is ${String(req.headers['x-amz-security-token'])}.` } }),
      invokeChunk({ type: 'content_block_stop', index: 0 }),
      invokeChunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } }),
      invokeChunk({ type: 'message_stop' }),
    ],
  }));
  const streamed = await viaRelay(relay, '/vendor-b/v1/messages', bedrockRoute.relayKey, messages('derived-bedrock', true));
  t.equal(streamed.status, 200);
  t.match(streamed.text, /Your token is \[redacted host key\]\*+\./, 'the stream goes on, the token masked');
  t.notMatch(streamed.text, KEY.sessionToken);
});

t.test('Vertex: the OAuth token Relay was issued is masked, passed through and translated', async (t) => {
  const warm = await viaRelay(relay, '/vendor-b/v1/messages', vertexClaude.relayKey, messages('derived-vertex-claude'));
  t.equal(warm.status, 200, warm.text);
  const token = /^Bearer (.+)$/.exec(String(google.requests.at(-1)!.headers.authorization))![1]!;
  t.ok(token.length >= 16, 'a token was sent');

  google.enqueue({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `token ${token} lacks a scope` } } });
  const passed = await viaRelay(relay, '/vendor-b/v1/messages', vertexClaude.relayKey, messages('derived-vertex-claude'));
  t.equal(passed.status, 400, passed.text);
  t.match(passed.text, /lacks a scope/);
  t.notMatch(passed.text, token);

  google.enqueue({ status: 400, body: google.error(400, 'INVALID_ARGUMENT', `Request with token ${token} is invalid`) });
  const translated = await viaRelay(relay, '/vendor-a/v1/chat/completions', vertexGemini.relayKey, chat('derived-vertex-gemini'));
  t.equal(translated.status, 400, translated.text);
  t.match(translated.text, /is invalid/);
  t.notMatch(translated.text, token);
});

t.test('Azure with Entra ID: the access token Relay was issued is masked', async (t) => {
  const warm = await viaRelay(relay, '/vendor-a/v1/chat/completions', entra.relayKey, chat('derived-entra'));
  t.equal(warm.status, 200, warm.text);
  const token = [...azure.tokens.keys()].at(-1)!;
  azureBackend.enqueue({
    kind: 'raw', handle: (_req, res: ServerResponse) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'BadRequest', message: `Bearer ${token} is not allowed here`, type: 'invalid_request_error' } }));
    },
  });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', entra.relayKey, chat('derived-entra'));
  t.equal(res.status, 400, res.text);
  t.match(res.text, /is not allowed here/);
  t.notMatch(res.text, token);
});
