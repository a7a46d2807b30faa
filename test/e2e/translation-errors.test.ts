// Upstream errors on translated routes reach the caller in the caller's shape, with the upstream's
// status, its message and retry-after kept: Anthropic 429 and 529 to OpenAI clients, OpenAI 400
// and 429 to Anthropic clients (raw and through the SDKs' typed errors), OpenAI 400 to canonical
// callers, and an in-stream error once the stream has started. Each case has its own route with
// one host key, so the error is the last candidate's and goes to the client.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { faults, openai as openaiBodies, startFakeUpstream, type ScriptedAction } from '../support/fake-upstream.ts';
import { settled, viaRelay, type Answer } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { openapiProblems, responseStreamEventSchema } from '../support/openapi-schemas.ts';

const relay = await startRelay();
const openaiUp = await startFakeUpstream();
const anthropicUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

let n = 0;
/** A fresh model on its own host (a failed key cools down), answering `action` once. */
async function failingRoute(vendor: 'openai' | 'anthropic', action: ScriptedAction): Promise<{ model: string; key: string }> {
  const up = vendor === 'openai' ? openaiUp : anthropicUp;
  const model = `${vendor}-err-${++n}`;
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: vendor, model, ...(vendor === 'openai' ? { shapes: ['openai.chat'] } : {}) });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && [...s.models.values()].some((m) => m.metadata.slug === model));
  up.enqueue(action);
  return { model, key: seeded.relayKey };
}

const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });
const messages = (model: string, stream = false) => ({ model, stream, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
const json = (a: Answer) => JSON.parse(a.text);

t.test('Anthropic 429 to an OpenAI chat client: 429, OpenAI error body, retry-after kept', async (t) => {
  for (const stream of [false, true]) {
    const r = await failingRoute('anthropic', faults.rateLimit({ vendor: 'anthropic', retryAfter: 7 }));
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.key, chat(r.model, stream));
    t.equal(got.status, 429, `stream ${stream}: status kept`);
    t.equal(got.headers.get('retry-after'), '7', 'retry-after kept');
    t.match(got.headers.get('content-type'), /^application\/json/);
    t.ok(got.headers.get('x-request-id'));
    const body = json(got);
    t.same(openapiProblems('ErrorResponse', body), [], 'an OpenAI error body');
    t.equal(body.error.type, 'rate_limit_error');
    t.match(body.error.message, /exceed the rate limit/, "the upstream's message");
  }
});

t.test('Anthropic 529 overloaded to OpenAI chat and Responses clients: 529 with a server error', async (t) => {
  for (const path of ['/vendor-a/v1/chat/completions', '/vendor-a/v1/responses']) {
    const r = await failingRoute('anthropic', faults.serverError({ vendor: 'anthropic', status: 529 }));
    const body = path.endsWith('responses') ? { model: r.model, input: 'hi' } : chat(r.model);
    const got = await viaRelay(relay, path, r.key, body);
    t.equal(got.status, 529, `${path}: status kept`);
    t.same(openapiProblems('ErrorResponse', json(got)), []);
    t.match(json(got), { error: { type: 'server_error', message: 'Overloaded' } });
  }
});

t.test('OpenAI 400 to an Anthropic client: 400 invalid_request_error with the message', async (t) => {
  const bad = { status: 400, body: openaiBodies.error("Invalid 'messages[0].content': string too long.", 'invalid_request_error', 'string_above_max_length', 'messages[0].content') };
  const r = await failingRoute('openai', bad);
  const got = await viaRelay(relay, '/vendor-b/v1/messages', r.key, messages(r.model));
  t.equal(got.status, 400);
  t.same(json(got), { type: 'error', error: { type: 'invalid_request_error', message: "Invalid 'messages[0].content': string too long." } });

  const sdkRoute = await failingRoute('openai', bad);
  const client = new Anthropic({ apiKey: sdkRoute.key, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
  const err = await client.messages.create({ model: sdkRoute.model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof Anthropic.BadRequestError, 'the SDK raises BadRequestError');
  t.match(err, { status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
});

t.test('OpenAI 429 to an Anthropic client: 429 rate_limit_error, retry-after kept; the OpenAI SDK sees Anthropic 429s as RateLimitError', async (t) => {
  const r = await failingRoute('openai', faults.rateLimit({ vendor: 'openai', retryAfter: 3 }));
  const got = await viaRelay(relay, '/vendor-b/v1/messages', r.key, messages(r.model, true));
  t.equal(got.status, 429);
  t.equal(got.headers.get('retry-after'), '3');
  t.match(json(got), { type: 'error', error: { type: 'rate_limit_error', message: /Rate limit reached/ } });

  const sdkRoute = await failingRoute('anthropic', faults.rateLimit({ vendor: 'anthropic', retryAfter: 5 }));
  const client = new OpenAI({ apiKey: sdkRoute.key, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
  const err = await client.chat.completions.create({ model: sdkRoute.model, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.RateLimitError, 'the OpenAI SDK raises RateLimitError');
  t.equal((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after'), '5');
});

t.test('OpenAI 400 to a canonical caller: 400 in the canonical error body, param as field', async (t) => {
  const r = await failingRoute('openai', { status: 400, body: openaiBodies.error('Unsupported parameter: temperature.', 'invalid_request_error', 'unsupported_parameter', 'temperature') });
  const got = await viaRelay(relay, '/v1/generate', r.key, { model: r.model, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  t.equal(got.status, 400);
  t.match(json(got), { error: { type: 'invalid_request', code: 'RELAY_ERR_BAD_REQUEST', message: 'Unsupported parameter: temperature.', status: 400, field: 'temperature' } });
});

t.test('an Anthropic in-stream error after the stream opened: the Responses client gets response.failed', async (t) => {
  const r = await failingRoute('anthropic', faults.anthropicStreamError({ type: 'overloaded_error', message: 'Overloaded' }));
  const got = await viaRelay(relay, '/vendor-a/v1/responses', r.key, { model: r.model, input: 'hi', stream: true });
  t.equal(got.status, 200, 'the stream had opened: no failover, status 200');
  const events = sseFrames(got.text).map((f) => JSON.parse(f.data));
  t.same(events.flatMap((e) => openapiProblems(responseStreamEventSchema(e.type), e).map((p) => `${e.type}: ${p}`)), [], 'every event matches the OpenAPI description');
  const last = events.at(-1);
  t.equal(last.type, 'response.failed');
  t.match(last.response.error, { message: 'Overloaded' });
});

t.test('a host key the upstream refuses is a 502 to the caller, not a 401 about its relay key', async (t) => {
  const r = await failingRoute('anthropic', faults.unauthorized({ vendor: 'anthropic' }));
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.key, chat(r.model));
  t.equal(got.status, 502);
  t.same(openapiProblems('ErrorResponse', json(got)), [], 'an OpenAI error body');
  t.match(json(got).error, { code: 'RELAY_ERR_HOST_KEY_REFUSED', message: /host key.*The upstream said: invalid x-api-key/ }, "says the host key was refused, with the upstream's message");
});

t.test('an upstream stream that ends before any output is a 502 in the caller shape, not a 200', async (t) => {
  const { anthropic: anthropicBodies } = await import('../support/fake-upstream.ts');
  const opening = anthropicBodies.events({ model: 'x' })[0]!;
  const r = await failingRoute('anthropic', { headers: { 'content-type': 'text/event-stream' }, frames: [opening], then: 'end' });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', r.key, chat(r.model, true));
  t.equal(got.status, 502);
  t.same(openapiProblems('ErrorResponse', json(got)), [], 'an OpenAI error body');
  t.match(json(got).error.message, /closed its stream before sending any output/);
});
