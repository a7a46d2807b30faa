// The canonical shape end to end: POST /v1/generate (JSON and SSE) translated to each upstream
// shape (Anthropic Messages, Chat-only, OpenAI with every shape, Responses-only) with a tool-call
// round trip, and the route as /openapi.json documents it: the CanonicalRequest body, the
// CanonicalResponse and stream-event answers, and the canonical error body. What Relay sends is
// validated against the schemas the document publishes.
import t, { type Test } from 'tap';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { FINAL_ANSWER, WEATHER_PARAMETERS, WEATHER_RESULT, WEATHER_TOOL, toolExchangeIn, toolRoundTripScript } from '../support/tool-round-trip.ts';

const relay = await startRelay();
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});

async function route(model: string, adapter: 'openai' | 'anthropic', shapes?: string[]) {
  const up = await startFakeUpstream();
  upstreams.push(up);
  up.script(toolRoundTripScript());
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter, model, policy: { modelIds: '*' }, ...(shapes ? { shapes } : {}) });
  return { up, model, seeded };
}

const targets = [
  { name: 'anthropic', r: await route('claude-up', 'anthropic'), path: '/v1/messages' },
  { name: 'chat-only', r: await route('chat-only-up', 'openai', ['openai.chat']), path: '/v1/chat/completions' },
  { name: 'openai (all shapes)', r: await route('openai-full-up', 'openai'), path: '/v1/chat/completions' },
  { name: 'responses-only', r: await route('responses-only-up', 'openai', ['openai.responses']), path: '/v1/responses' },
];
await settled(relay, (s) => targets.every((x) => s.relayKeys.has(x.r.seeded.relayKeyId)) && s.models.size >= targets.length);
const key = targets[0]!.r.seeded.relayKey;

// ---------------------------------------------------------------------------------------------
// The document

const doc = await (await fetch(`${relay.inferenceUrl}/openapi.json`)).json() as { openapi: string; paths?: Record<string, any> };
const generate = doc.paths?.['/v1/generate']?.post;
const ajv = new Ajv2020({ strict: false, allErrors: true });
const documented = (schema: unknown): ValidateFunction => ajv.compile(schema as object);
const problems = (validate: ValidateFunction, value: unknown): string[] =>
  validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);

t.test('/openapi.json documents POST /v1/generate with the canonical request, response, stream events and errors', async (t) => {
  const result = await new Validator().validate(doc);
  t.ok(result.valid, `a valid OpenAPI document: ${JSON.stringify(result.errors ?? null).slice(0, 1500)}`);
  t.ok(generate, 'POST /v1/generate is documented');
  const body = generate.requestBody.content['application/json'].schema;
  t.match(body, { type: 'object', required: ['model', 'messages'] }, 'the body is the CanonicalRequest');
  t.ok(['system', 'messages', 'tools', 'tool_choice', 'reasoning', 'response_format', 'stream', 'metadata'].every((k) => k in body.properties), 'with every canonical request field');
  t.equal(body.additionalProperties, false);

  const ok = generate.responses['200'];
  t.match(ok.content['application/json'].schema, { type: 'object', required: ['id', 'model', 'content', 'stop_reason', 'usage'] }, 'JSON answer: CanonicalResponse');
  t.match(ok.content['application/json'].schema.properties.usage.required, ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens']);
  t.ok(Array.isArray(ok.content['text/event-stream'].schema.anyOf), 'SSE answer: one canonical stream event per frame');
  for (const status of ['4XX', '5XX']) {
    t.match(generate.responses[status].content['application/json'].schema, { required: ['error'], properties: { error: { required: ['type', 'code', 'message', 'status'] } } }, `${status}: CanonicalError`);
  }
  t.notOk(JSON.stringify(generate).includes('"$id"'), 'no $id left in the route schemas');
  t.same(generate.security, [{ relayKey: [] }]);
});

t.test('a canonical error matches the documented error schema', async (t) => {
  const res = await viaRelay(relay, '/v1/generate', 'rk_wrong', { model: 'claude-up', messages: [] });
  t.equal(res.status, 401);
  t.same(problems(documented(generate.responses['4XX'].content['application/json'].schema), JSON.parse(res.text)), []);
});

// ---------------------------------------------------------------------------------------------
// Tool round trips through each upstream

const tools = [{ type: 'function', name: WEATHER_TOOL.name, description: 'Current weather', parameters: WEATHER_PARAMETERS }];
const question = { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] };

interface CanonicalAnswer { content: Array<Record<string, any>>; stop_reason: string; usage: Record<string, number> }

/** A /v1/generate call; a streamed answer is checked frame by frame and folded into content. */
async function generateVia(t: Test, model: string, messages: unknown[], stream: boolean): Promise<CanonicalAnswer> {
  const res = await viaRelay(relay, '/v1/generate', key, { model, messages, tools, stream });
  t.equal(res.status, 200, res.status === 200 ? 'status 200' : res.text);
  if (!stream) {
    t.match(res.headers.get('content-type'), /^application\/json/);
    const answer = JSON.parse(res.text);
    t.same(problems(documented(generate.responses['200'].content['application/json'].schema), answer), [], 'the JSON answer matches the documented CanonicalResponse');
    return answer;
  }
  t.match(res.headers.get('content-type'), /^text\/event-stream/);
  const validEvent = documented(generate.responses['200'].content['text/event-stream'].schema);
  const frames = sseFrames(res.text);
  const events = frames.map((f) => JSON.parse(f.data));
  t.same(frames.filter((f, i) => f.event !== events[i].type).map((f) => f.event), [], 'each frame is named after its event type');
  t.same(events.flatMap((e) => problems(validEvent, e).map((p) => `${e.type}: ${p}`)), [], 'every event matches the documented stream event schema');
  t.equal(events[0]?.type, 'start');
  t.equal(events.at(-1)?.type, 'end');
  const content: Array<Record<string, any>> = [];
  for (const e of events) {
    if (e.type === 'part_start') content[e.index] = e.part.type === 'tool_call' ? { ...e.part, arguments: '' } : { type: e.part.type, text: '' };
    if (e.type === 'delta') content[e.index]![e.delta.type === 'arguments' ? 'arguments' : 'text'] += e.delta.text;
  }
  return { content, stop_reason: events.at(-1).stop_reason, usage: events.at(-1).usage };
}

for (const target of targets) {
  for (const stream of [false, true]) {
    t.test(`/v1/generate -> ${target.name}: tool round trip, ${stream ? 'SSE' : 'JSON'}`, async (t) => {
      const first = await generateVia(t, target.r.model, [question], stream);
      t.equal(first.stop_reason, 'tool_use');
      const call = first.content.find((p) => p.type === 'tool_call');
      if (!call) return t.fail('a tool_call part');
      t.equal(call.name, WEATHER_TOOL.name);
      t.same(JSON.parse(call.arguments), WEATHER_TOOL.input);
      t.ok(first.usage.input_tokens > 0 && first.usage.output_tokens > 0, 'usage is reported');

      const turnTwo = [
        question,
        { role: 'assistant', content: [{ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments }] },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: call.id, content: [{ type: 'text', text: WEATHER_RESULT }] }] },
      ];
      const second = await generateVia(t, target.r.model, turnTwo, stream);
      t.same(second.content.map((p) => p.text), [FINAL_ANSWER]);
      t.equal(second.stop_reason, 'end_turn');

      const received = target.r.up.lastRequest()!;
      t.equal(received.pathname, target.path);
      const exchange = toolExchangeIn(received);
      t.equal(exchange.callId, call.id, 'turn 2 carries the tool call with its id');
      t.same(exchange.input, WEATHER_TOOL.input);
      t.equal(exchange.resultFor, call.id, 'the tool result refers to that id');
      t.match(exchange.result, WEATHER_RESULT);
    });
  }
}

t.test("a canonical answer names the served model, not the upstream's name for it, as every shape's does", async (t) => {
  const up = await startFakeUpstream();
  upstreams.push(up);
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-slug', upstreamModel: 'claude-upstream-name-4-5', policy: { modelIds: '*' } });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId));
  const ask = { model: 'claude-slug', messages: [question] };
  const json = await viaRelay(relay, '/v1/generate', seeded.relayKey, ask);
  t.equal(json.status, 200, json.text);
  t.equal(up.lastRequest()?.json?.model, 'claude-upstream-name-4-5', 'the upstream was asked by its own name');
  t.equal(JSON.parse(json.text).model, 'claude-slug');
  const streamed = await viaRelay(relay, '/v1/generate', seeded.relayKey, { ...ask, stream: true });
  t.equal(streamed.status, 200, streamed.text);
  const start = sseFrames(streamed.text).map((f) => JSON.parse(f.data)).find((e) => e.type === 'start');
  t.equal(start?.model, 'claude-slug', "the stream's start event too");
  const chat = await viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, ask);
  t.equal(JSON.parse(chat.text).model, 'claude-slug', 'as a Chat answer does');
});
