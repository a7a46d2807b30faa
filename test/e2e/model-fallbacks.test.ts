// Model fallbacks (issue 42 item 1): a model whose bindings all fail before the first byte moves
// to its spec.fallbacks in order, on another vendor and shape if need be; the client keeps its own
// shape, sees the served model, and the usage record lists every model tried and why it moved on.
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, faults, parseSse, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';

const logLines: string[] = [];
const relay = await startRelay({ logLevel: 'warn', logStream: { write: (line) => void logLines.push(line) } });
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});

async function fake(options: Parameters<typeof startFakeUpstream>[0] = {}): Promise<FakeUpstream> {
  const up = await startFakeUpstream(options);
  upstreams.push(up);
  return up;
}

const TOOL = { name: 'get_weather', input: { city: 'Paris' } };
// The Anthropic model is overloaded on every request; the OpenAI one answers with a tool call.
const claudeUp = await fake();
claudeUp.script(() => faults.serverError({ vendor: 'anthropic', status: 529 }));
const gptUp = await fake({ toolCall: TOOL });
const deniedUp = await fake();

const gpt = await seedRoute(relay, { baseUrl: `${gptUp.url}/v1`, adapter: 'openai', model: 'fb-gpt' });
const denied = await seedRoute(relay, { baseUrl: `${deniedUp.url}/v1`, adapter: 'openai', model: 'fb-denied' });
const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'fb-claude' });
// The key may use the Anthropic and the OpenAI model, not fb-denied.
t.equal((await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { modelIds: [claude.modelId, gpt.modelId] } })).status, 200);

type Fallbacks = Array<{ modelId: string; on?: string[] }>;
// jsonb reorders keys: compare what matters.
const summary = (fallbacks: Fallbacks | undefined) => JSON.stringify((fallbacks ?? []).map((f) => [f.modelId, f.on ?? null]));
async function setFallbacks(model: Seeded, fallbacks: Fallbacks): Promise<void> {
  const res = await relay.api('PUT', `/api/models/by-id/${model.modelId}`, { spec: { fallbacks } });
  if (res.status !== 200) throw new Error(`setting fallbacks: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (s) => summary(s.models.get(model.modelId)?.spec.fallbacks) === summary(fallbacks));
}
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.policies.get(claude.policyId)?.spec.modelIds.length === 2
  && [gpt, denied, claude].every((x) => s.hostKeysOfHost(x.hostId).length === 1));

const messages = (stream: boolean) => ({
  model: 'fb-claude', max_tokens: 256, stream,
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  tools: [{ name: TOOL.name, description: 'Current weather', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
});

t.test('a Messages request to an Anthropic model answering 529 falls back to an OpenAI model, tool call intact', async (t) => {
  await setFallbacks(claude, [{ modelId: denied.modelId }, { modelId: gpt.modelId, on: ['server_error'] }]);
  const claudeBefore = claudeUp.count;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages(true));
  t.equal(res.status, 200, res.text);
  t.match(res.headers.get('content-type'), /text\/event-stream/);
  t.equal(res.headers.get('x-relay-served-model'), 'fb-gpt', 'the client sees which model answered');
  t.equal(claudeUp.count - claudeBefore, 1, 'the Anthropic model was tried first');
  t.equal(deniedUp.count, 0, 'the fallback the policy does not grant was never called');
  t.ok(gptUp.count >= 1, 'the OpenAI model answered');

  const frames = parseSse(res.text);
  const start = JSON.parse(frames.find((f) => f.event === 'message_start')!.data);
  t.equal(start.message.model, 'fb-gpt', "the response's model is the served model");
  const message = await sdkFinalMessage(res.text);
  const toolUse = message.content.find((b) => b.type === 'tool_use');
  t.ok(toolUse, 'a valid Messages stream with the tool call');
  if (toolUse?.type === 'tool_use') {
    t.equal(toolUse.name, TOOL.name);
    t.same(toolUse.input, TOOL.input);
  }
  t.equal(message.stop_reason, 'tool_use');

  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.model_requested, 'fb-claude', 'the record names the requested model');
  t.equal(record.model_slug, 'fb-gpt', 'and the served one');
  t.equal(record.extras.relay_served_model, 'fb-gpt');
  t.same(JSON.parse(record.extras.relay_model_attempts), [
    { model: 'fb-claude', outcome: 'server_error' },
    { model: 'fb-denied', outcome: 'not_granted' },
    { model: 'fb-gpt' },
  ], 'each model tried and why it moved on');
  t.ok(logLines.some((l) => l.includes('fallback skipped') && l.includes('fb-denied')), 'the skipped fallback is logged');
});

t.test('a non-streamed Messages request falls back too, and answers in the Messages shape', async (t) => {
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages(false));
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'fb-gpt');
  const body = JSON.parse(res.text);
  t.equal(body.type, 'message');
  t.equal(body.model, 'fb-gpt');
  t.match(body.content.find((b: { type: string }) => b.type === 'tool_use'), { name: TOOL.name, input: TOOL.input });
});

t.test("a failure the fallback's `on` does not list is the client's answer; the fallback is not called", async (t) => {
  await setFallbacks(claude, [{ modelId: gpt.modelId, on: ['rate_limit'] }]);
  const gptBefore = gptUp.count;
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages(false));
  t.equal(res.status, 502, res.text);
  t.equal(res.headers.get('x-relay-served-model'), null, 'no model answered');
  const body = JSON.parse(res.text);
  t.equal(body.type, 'error', 'an error in the Messages shape');
  t.match(body.error.message, /fb-claude/);
  t.equal(gptUp.count, gptBefore, 'the fallback was not tried');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'fb-claude', outcome: 'server_error' }]);
});

t.test('a model without fallbacks still passes the upstream error through, as before', async (t) => {
  await setFallbacks(claude, []);
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages(false));
  t.equal(res.status, 529, 'the upstream status, as before');
  t.match(JSON.parse(res.text), { type: 'error', error: { type: 'overloaded_error' } });
  t.equal(res.headers.get('x-relay-served-model'), 'fb-claude', 'the model that answered, with an error');
});

t.test("a policy's fallbacks apply to its models that have none of their own", async (t) => {
  await setFallbacks(claude, []);
  t.equal((await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { fallbacks: [{ modelId: gpt.modelId }] } })).status, 200);
  await settled(relay, (s) => s.policies.get(claude.policyId)?.spec.fallbacks?.length === 1);
  const res = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages(false));
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'fb-gpt');
  t.equal(JSON.parse(res.text).model, 'fb-gpt');
  // A model's own list wins over the policy's.
  await setFallbacks(claude, [{ modelId: gpt.modelId, on: ['timeout'] }]);
  const gptBefore = gptUp.count;
  const own = await viaRelay(relay, '/vendor-b/v1/messages', claude.relayKey, messages(false));
  // 502 for the 529, or 503 once repeated 529s opened the Anthropic key's circuit.
  t.ok(own.status === 502 || own.status === 503, `the model's own list (timeout only) does not take it (${own.status})`);
  t.equal(gptUp.count, gptBefore, 'the policy\'s fallback was not used');
  t.equal((await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { fallbacks: [] } })).status, 200);
  await setFallbacks(claude, []);
});

t.test('a 429 moves to a fallback that takes rate_limit, and the record says why', async (t) => {
  const limitedUp = await fake();
  limitedUp.script(() => faults.rateLimit({ vendor: 'openai', retryAfter: 30 }));
  const limited = await seedRoute(relay, { baseUrl: `${limitedUp.url}/v1`, adapter: 'openai', model: 'fb-limited' });
  t.equal((await relay.api('PUT', `/api/policies/by-id/${limited.policyId}`, { spec: { modelIds: [limited.modelId, gpt.modelId] } })).status, 200);
  await setFallbacks(limited, [{ modelId: gpt.modelId, on: ['rate_limit'] }]);
  await settled(relay, (s) => s.relayKeys.has(limited.relayKeyId) && s.policies.get(limited.policyId)?.spec.modelIds.length === 2);
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', limited.relayKey, { model: 'fb-limited', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.status, 200, res.text);
  t.equal(res.headers.get('x-relay-served-model'), 'fb-gpt');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.same(JSON.parse(record.extras.relay_model_attempts), [{ model: 'fb-limited', outcome: 'rate_limit' }, { model: 'fb-gpt' }]);
  // Now the only key cools down: the resolver's refusal (every key cooling) is a rate limit too.
  const again = await viaRelay(relay, '/vendor-a/v1/chat/completions', limited.relayKey, { model: 'fb-limited', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(again.status, 200, again.text);
  const second = await usageRecord(relay, again.headers.get('x-request-id')!);
  t.same(JSON.parse(second.extras.relay_model_attempts), [{ model: 'fb-limited', outcome: 'rate_limit' }, { model: 'fb-gpt' }]);
  t.equal(limitedUp.count, 1, 'the cooling key was not asked again');
});

t.test('fallbacks are checked on write: an unknown model id or condition is a 4xx naming it', async (t) => {
  const unknown = await relay.api('PUT', `/api/models/by-id/${claude.modelId}`, { spec: { fallbacks: [{ modelId: '00000000-0000-4000-8000-000000000000' }] } });
  t.ok(unknown.status >= 400 && unknown.status < 500, `unknown model refused (${unknown.status})`);
  t.match(JSON.stringify(unknown.body), /fallbacks/);
  const badCondition = await relay.api('PUT', `/api/models/by-id/${claude.modelId}`, { spec: { fallbacks: [{ modelId: gpt.modelId, on: ['sometimes'] }] } });
  t.equal(badCondition.status, 400);
  t.match(JSON.stringify(badCondition.body), /on/);
  const policyUnknown = await relay.api('PUT', `/api/policies/by-id/${claude.policyId}`, { spec: { fallbacks: [{ modelId: '00000000-0000-4000-8000-000000000000' }] } });
  t.ok(policyUnknown.status >= 400 && policyUnknown.status < 500, `a policy's unknown fallback refused (${policyUnknown.status})`);
});
