// The Bedrock adapter against a fake Bedrock runtime that speaks the real wire
// (test/support/fake-bedrock.ts): SigV4 signatures verified by AWS's signer (a wrong one is
// refused with 403), Bedrock API keys, the binary event stream read back as SSE, InvokeModel's
// body rules for Anthropic Messages, and Bedrock's exceptions as the statuses failover reads.
import t from 'tap';
import { createTestUpstreamClient, eventually } from '../../core/testing.ts';
import type { Route, UpstreamRequest, UpstreamResponse } from '../../core/plugin-api.ts';
import { createBedrockAdapter, operationUrl } from '../../plugins/vendor-bedrock/adapter.ts';
import { EventStreamToSse, converseToSse } from '../../plugins/vendor-bedrock/event-stream.ts';
import { parseHostKey } from '../../plugins/vendor-bedrock/credentials.ts';
import { converseAnswer, encodeStream, startFakeBedrock, type AwsKey, type BedrockAction } from '../support/fake-bedrock.ts';
import { startFakeSts } from '../support/fake-sts.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sseFrames } from '../support/sse-frames.ts';

const KEY = { accessKeyId: 'AKIAFAKEBEDROCK01', secretAccessKey: 'fake/Secret+Key0123456789abcdefghijklmno' };
const TEMP = { accessKeyId: 'ASIAFAKEBEDROCK02', secretAccessKey: 'tempSecret0123456789', sessionToken: 'FwoGZXIvYXdzEFAKE/token+value=' };
const accepted: AwsKey[] = [KEY, TEMP];
const fake = await startFakeBedrock({ keys: accepted, apiKeys: ['ABSKfakeBedrockApiKey'], region: 'eu-west-3' });
const client = createTestUpstreamClient();
t.teardown(async () => {
  await fake.close();
  await client.close();
});

const adapter = createBedrockAdapter('bedrock');
const MODEL = 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0';

function route(options: Record<string, unknown> = { region: 'eu-west-3', endpoint: fake.url }, hostId = 'host-1'): Route {
  return {
    upstreamModel: MODEL, adapter,
    host: { metadata: { id: hostId, slug: 'bedrock-eu' }, spec: { baseUrl: 'https://bedrock.invalid', timeoutMs: 5_000, enabled: true, options } },
  } as unknown as Route;
}

function request(fields: Partial<UpstreamRequest>): UpstreamRequest {
  return {
    route: route(), shape: 'bedrock.converse', body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
    headers: {}, credential: `${KEY.accessKeyId}:${KEY.secretAccessKey}`, stream: false, signal: new AbortController().signal, client, ...fields,
  };
}

async function text(res: UpstreamResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function once(action: BedrockAction): void {
  let used = false;
  fake.script(() => {
    if (used) return undefined;
    used = true;
    return action;
  });
}

t.test('the URL: the regional endpoint by default, the model id escaped into one path segment', async (t) => {
  t.equal(operationUrl({ region: 'us-west-2' }, 'arn:aws:bedrock:us-west-2:123:inference-profile/us.anthropic.claude', 'converse').toString(),
    'https://bedrock-runtime.us-west-2.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A123%3Ainference-profile%2Fus.anthropic.claude/converse');
});

t.test('a SigV4-signed Converse request is verified by the fake and answered', async (t) => {
  const before = fake.requests.length;
  const res = await adapter.send(request({}));
  t.equal(res.status, 200);
  const body = JSON.parse(await text(res)) as { output: { message: { content: Array<{ text: string }> } } };
  t.equal(body.output.message.content[0].text, 'Hello from Bedrock');
  const seen = fake.requests[before];
  t.equal(seen.operation, 'converse');
  t.equal(seen.modelId, MODEL, 'the model id with its colon arrives whole');
  t.equal(seen.principal, KEY.accessKeyId);
  t.match(String(seen.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK01\/\d{8}\/eu-west-3\/bedrock\/aws4_request/);
});

t.test('a session token is signed and sent; a wrong secret or region is refused with 403 as AWS does', async (t) => {
  const ok = await adapter.send(request({ credential: `${TEMP.accessKeyId}:${TEMP.secretAccessKey}:${TEMP.sessionToken}` }));
  t.equal(ok.status, 200);
  await text(ok);
  const refusedBefore = fake.refused;
  const wrong = await adapter.send(request({ credential: `${KEY.accessKeyId}:not-the-secret` }));
  t.equal(wrong.status, 403, 'a wrong signature is a 403 (the pipeline marks the key and fails over)');
  t.match(await text(wrong), /signature we calculated does not match/);
  const region = await adapter.send(request({ route: route({ region: 'us-east-1', endpoint: fake.url }) }));
  t.equal(region.status, 403, 'signed for another region');
  await text(region);
  t.equal(fake.refused, refusedBefore + 2);
});

t.test('a Bedrock API key (no colon) is sent as a bearer token', async (t) => {
  const before = fake.requests.length;
  const res = await adapter.send(request({ credential: 'ABSKfakeBedrockApiKey' }));
  t.equal(res.status, 200);
  await text(res);
  t.equal(fake.requests[before].principal, 'bearer');
  t.throws(() => parseHostKey('AKID::token'), /ACCESS_KEY_ID:SECRET_ACCESS_KEY/);
  try {
    parseHostKey('AKID:secret-value:tok:extra');
  } catch (err) {
    t.notMatch((err as Error).message, /secret-value/, 'the error never quotes the key');
  }
});

t.test('ConverseStream: the binary event stream, split mid-message, arrives as SSE frames', async (t) => {
  once({ kind: 'events', messages: converseAnswer('Hello there').events, chunkBytes: 7 });
  const res = await adapter.send(request({ stream: true }));
  t.equal(res.status, 200);
  t.match(String(res.headers['content-type']), /text\/event-stream/);
  const frames = sseFrames(await text(res));
  t.same(frames.map((f) => f.event), ['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata']);
  t.same((JSON.parse(frames[1].data) as { delta: unknown }).delta, { text: 'Hel' });
});

t.test('a corrupt event-stream message (CRC mismatch) is an error, not a frame', async (t) => {
  const bytes = encodeStream(converseAnswer('Hi').events);
  bytes[bytes.length - 6] ^= 0xff;
  const converter = new EventStreamToSse(converseToSse);
  t.throws(() => converter.push(bytes), /checksum|crc/i);
  t.throws(() => new EventStreamToSse(converseToSse).push(Buffer.from([0, 0, 0, 1, 0, 0, 0, 0])), /states 1 bytes/);
  const cut = new EventStreamToSse(converseToSse);
  cut.push(encodeStream(converseAnswer('Hi').events).subarray(0, 30));
  t.throws(() => cut.end(), /ended inside a message/);
});

t.test('a message split into one-byte reads decodes whole, and a large one in small reads is joined once, not on every read', async (t) => {
  const bytes = encodeStream(converseAnswer('Hello there').events);
  const byByte = new EventStreamToSse(converseToSse);
  let text = '';
  for (let i = 0; i < bytes.length; i++) text += byByte.push(bytes.subarray(i, i + 1));
  text += byByte.end();
  t.same(sseFrames(text).map((f) => f.event), ['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata']);

  // A hostile upstream's 16 MiB message in small reads: joining on every read copies the whole
  // so far each time (~128 GB for 16 MiB in 1 KiB reads). The bytes joined are counted here.
  const big = 'x'.repeat(2 * 1024 * 1024);
  const large = encodeStream([{ event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: big } } }]);
  const concat = Buffer.concat;
  let copied = 0;
  Buffer.concat = (list: readonly Uint8Array[], length?: number) => {
    const joined = concat(list, length);
    copied += joined.length;
    return joined;
  };
  let out = '';
  try {
    const converter = new EventStreamToSse(converseToSse);
    for (let at = 0; at < large.length; at += 1024) out += converter.push(large.subarray(at, at + 1024));
    converter.end();
  } finally {
    Buffer.concat = concat;
  }
  t.ok(copied <= 2 * large.length, `${copied} bytes joined for a ${large.length}-byte message`);
  const frames = sseFrames(out);
  t.equal(frames.length, 1);
  t.equal((JSON.parse(frames[0].data) as { delta: { text: string } }).delta.text.length, big.length);
});

t.test('Anthropic Messages through InvokeModel: the body Bedrock takes, the stream as Anthropic SSE', async (t) => {
  const before = fake.requests.length;
  const clientBody = JSON.stringify({ model: 'claude-client-name', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const res = await adapter.send(request({
    shape: 'anthropic.messages', body: clientBody, stream: true,
    headers: { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14', 'anthropic-version': '2023-06-01' },
  }));
  t.equal(res.status, 200);
  const sent = fake.requests[before];
  t.equal(sent.operation, 'invoke-with-response-stream');
  t.notOk('model' in sent.body, 'no model field');
  t.notOk('stream' in sent.body, 'no stream field');
  t.equal(sent.body.anthropic_version, 'bedrock-2023-05-31');
  t.same(sent.body.anthropic_beta, ['interleaved-thinking-2025-05-14'], 'only betas Bedrock serves');
  const frames = sseFrames(await text(res));
  t.same(frames.map((f) => f.event), ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  t.equal((JSON.parse(frames[2].data) as { delta: { text: string } }).delta.text, 'Hello from Claude on Bedrock');
  const inspector = adapter.streamInspector('anthropic.messages');
  t.same(frames.map((f) => inspector.inspect(f.event, f.data)), ['opening', 'output', 'output', 'output', 'output', 'output']);
  t.equal(inspector.usage()?.output_tokens, 4);
});

t.test('Anthropic usage through InvokeModel: 1-hour cache writes and web searches are read, as Anthropic\'s own adapter reads them', async (t) => {
  const usage = { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 }, server_tool_use: { web_search_requests: 2 } };
  t.same(adapter.usageFromBody('anthropic.messages', { usage }), {
    input_tokens: 160, output_tokens: 4, cache_read_tokens: 100, cache_write_tokens: 50, cache_write_1h_tokens: 30, reasoning_tokens: 0, web_search_requests: 2,
  });
  const inspector = adapter.streamInspector('anthropic.messages');
  inspector.inspect('message_start', JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } }));
  inspector.inspect('message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 4, server_tool_use: { web_search_requests: 2 } } }));
  t.match(inspector.usage(), { input_tokens: 10, output_tokens: 4, web_search_requests: 2 }, 'streamed: message_delta\'s count');
});

t.test("Bedrock's exceptions become the statuses health and failover read", async (t) => {
  const cases: Array<[string, number, number, string]> = [
    ['ThrottlingException', 429, 429, 'rate_limit_error'],
    ['ServiceQuotaExceededException', 400, 429, 'rate_limit_error'],
    ['ModelNotReadyException', 429, 503, 'overloaded_error'],
    ['ServiceUnavailableException', 503, 503, 'overloaded_error'],
    ['ModelErrorException', 424, 502, 'overloaded_error'],
    ['ValidationException', 400, 400, 'invalid_request_error'],
  ];
  for (const [type, awsStatus, status, anthropicType] of cases) {
    once({ kind: 'json', status: awsStatus, body: { message: `${type} happened` }, errorType: type });
    const converse = await adapter.send(request({}));
    t.equal(converse.status, status, `${type}: ${status}`);
    t.equal(adapter.decodeError('bedrock.converse', converse.status, await text(converse)).message, `${type} happened`);
    once({ kind: 'json', status: awsStatus, body: { message: `${type} again` }, errorType: type });
    const messages = await adapter.send(request({ shape: 'anthropic.messages', body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [] }) }));
    t.equal(messages.status, status);
    t.same(JSON.parse(await text(messages)), { type: 'error', error: { type: anthropicType, message: `${type} again` } }, `${type}: Anthropic's error body`);
  }
});

t.test('an exception inside the stream ends it with an error the client shape can carry', async (t) => {
  once({ kind: 'events', messages: [{ event: 'messageStart', payload: { role: 'assistant' } }, { exception: 'throttlingException', message: 'Too many tokens, please wait.' }] });
  const res = await adapter.send(request({ stream: true }));
  const frames = sseFrames(await text(res));
  const events = frames.flatMap((f) => adapter.streamDecoder('bedrock.converse', route(), undefined as never).decode(f.event, f.data));
  const error = events.find((e) => e.type === 'error');
  t.equal(error?.type === 'error' ? error.error.code : null, 'RELAY_ERR_UPSTREAM_RATE_LIMITED');
  once({ kind: 'events', messages: [{ exception: 'modelStreamErrorException', message: 'model broke' }] });
  const invoke = await adapter.send(request({ shape: 'anthropic.messages', body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [] }), stream: true }));
  const anthropicFrames = sseFrames(await text(invoke));
  t.same(anthropicFrames.map((f) => [f.event, JSON.parse(f.data)]), [['error', { type: 'error', error: { type: 'overloaded_error', message: 'model broke' } }]]);
});

t.test('credentials: chain signs with the AWS credential chain of the process (here: the environment)', async (t) => {
  process.env.AWS_ACCESS_KEY_ID = TEMP.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = TEMP.secretAccessKey;
  process.env.AWS_SESSION_TOKEN = TEMP.sessionToken;
  t.teardown(() => {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    delete process.env.AWS_SESSION_TOKEN;
  });
  const before = fake.requests.length;
  const res = await adapter.send(request({ route: route({ region: 'eu-west-3', endpoint: fake.url, credentials: 'chain' }), credential: 'unused' }));
  t.equal(res.status, 200);
  await text(res);
  t.equal(fake.requests[before].principal, TEMP.accessKeyId, 'signed with the environment\'s keys, the host key value unused');
  t.equal(fake.requests[before].headers['x-amz-security-token'], TEMP.sessionToken);
});

t.test('credentials: chain with a web identity (EKS): STS once per host, refreshed before the credentials expire', async (t) => {
  const sts = await startFakeSts(accepted);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-webid-'));
  writeFileSync(path.join(dir, 'token'), 'eyJ.fake-service-account-token.sig');
  const env = {
    AWS_WEB_IDENTITY_TOKEN_FILE: path.join(dir, 'token'), AWS_ROLE_ARN: 'arn:aws:iam::123456789012:role/relay', AWS_ROLE_SESSION_NAME: 'relay-session',
    AWS_REGION: 'eu-west-3', AWS_ENDPOINT_URL_STS: sts.url, AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: path.join(dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
  };
  Object.assign(process.env, env);
  t.teardown(async () => {
    for (const name of Object.keys(env)) delete process.env[name];
    await sts.close();
  });
  const chain = (hostId: string) => request({ route: route({ region: 'eu-west-3', endpoint: fake.url, credentials: 'chain' }, hostId), credential: 'unused' });

  const before = fake.requests.length;
  for (let i = 0; i < 2; i++) await text(await adapter.send(chain('host-eks')));
  t.same(fake.requests.slice(before).map((r) => r.principal), ['ASIAWEBIDENTITY1', 'ASIAWEBIDENTITY1'], 'signed with the role\'s session, verified by the fake');
  t.same(sts.tokens, ['eyJ.fake-service-account-token.sig'], 'one AssumeRoleWithWebIdentity for two requests: the provider is cached per host');

  // Credentials within the SDK's 5-minute refresh window are still used while new ones are
  // fetched in the background; the next request signs with the new ones.
  sts.lifetimeMs = 60_000;
  const start = fake.requests.length;
  await text(await adapter.send(chain('host-eks-short')));
  await text(await adapter.send(chain('host-eks-short')));
  t.same(fake.requests.slice(start).map((r) => r.principal), ['ASIAWEBIDENTITY2', 'ASIAWEBIDENTITY2'], 'still valid: used while the refresh runs');
  await eventually(async () => {
    await text(await adapter.send(chain('host-eks-short')));
    return fake.requests.at(-1)!.principal !== 'ASIAWEBIDENTITY2';
  }, 5_000, 20);
  t.match(fake.requests.at(-1)!.principal, /^ASIAWEBIDENTITY[3-9]$/, 'about to expire: refreshed, and the new session used');
  t.ok(sts.tokens.length >= 3);
});
