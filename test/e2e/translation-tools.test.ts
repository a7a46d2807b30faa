// Translation end to end with the official SDKs: a tool-call round trip (turn 1 the upstream asks
// for a tool, the client sends the result, turn 2 the upstream answers text) through every pair of
// a client shape and an upstream shape that differ, streamed and not. Turn 2 is checked at the
// upstream: the tool call's id and the result arrive in the upstream's own shape. OpenAI streams
// are validated chunk by chunk against OpenAI's OpenAPI description; Anthropic streams go through
// the SDK's stream helper, which rejects malformed event sequences.
import t, { type Test } from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { openapiProblems, responseStreamEventSchema } from '../support/openapi-schemas.ts';
import { FINAL_ANSWER, WEATHER_PARAMETERS, WEATHER_RESULT, WEATHER_TOOL, toolExchangeIn, toolRoundTripScript } from '../support/tool-round-trip.ts';

const relay = await startRelay();
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});

/** One model per upstream, each on its own fake, all granted to every key. */
async function route(model: string, adapter: 'openai' | 'anthropic', shapes?: string[]) {
  const up = await startFakeUpstream();
  upstreams.push(up);
  up.script(toolRoundTripScript());
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter, model, policy: { modelIds: '*' }, ...(shapes ? { shapes } : {}) });
  return { up, model, seeded };
}

const claude = await route('claude-up', 'anthropic');
const chatOnly = await route('chat-only-up', 'openai', ['openai.chat']);
const openaiFull = await route('openai-full-up', 'openai');
const responsesOnly = await route('responses-only-up', 'openai', ['openai.responses']);
const all = [claude, chatOnly, openaiFull, responsesOnly];
await settled(relay, (s) => all.every((r) => s.relayKeys.has(r.seeded.relayKeyId)) && s.models.size >= all.length);

const key = claude.seeded.relayKey;
const openai = new OpenAI({ apiKey: key, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: key, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
const QUESTION = 'What is the weather in Paris?';

/** Turn 2 as the upstream received it: the call's id, name and input, and the result for that id. */
function checkTurnTwo(t: Test, up: FakeUpstream, callId: string, upstreamPath: string): void {
  const received = up.lastRequest()!;
  t.equal(received.pathname, upstreamPath, `the upstream was asked on ${upstreamPath}`);
  const exchange = toolExchangeIn(received);
  t.equal(exchange.callId, callId, 'turn 2 carries the tool call with its id');
  t.equal(exchange.name, WEATHER_TOOL.name);
  t.same(exchange.input, WEATHER_TOOL.input, 'with its arguments');
  t.equal(exchange.resultFor, callId, 'the tool result refers to that id');
  t.match(exchange.result, WEATHER_RESULT, 'and carries the result');
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions client -> Anthropic upstream

const chatTools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: WEATHER_TOOL.name, description: 'Current weather', parameters: WEATHER_PARAMETERS } }];

t.test('openai chat -> anthropic: tool round trip, not streamed', async (t) => {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: QUESTION }];
  const first = await openai.chat.completions.create({ model: claude.model, messages, tools: chatTools });
  t.same(openapiProblems('CreateChatCompletionResponse', first), [], 'turn 1 matches the OpenAPI description');
  const choice = first.choices[0]!;
  t.equal(choice.finish_reason, 'tool_calls');
  const call = choice.message.tool_calls![0]!;
  t.ok(call.type === 'function');
  if (call.type !== 'function') return;
  t.equal(call.function.name, WEATHER_TOOL.name);
  t.same(JSON.parse(call.function.arguments), WEATHER_TOOL.input);
  t.same(claude.up.lastRequest()!.json.tools.map((x: { name: string }) => x.name), [WEATHER_TOOL.name], 'the tool reached the upstream as an Anthropic tool');

  messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: WEATHER_RESULT });
  const second = await openai.chat.completions.create({ model: claude.model, messages, tools: chatTools });
  t.equal(second.choices[0]!.message.content, FINAL_ANSWER);
  t.equal(second.choices[0]!.finish_reason, 'stop');
  checkTurnTwo(t, claude.up, call.id, '/v1/messages');
});

t.test('openai chat -> anthropic: tool round trip, streamed', async (t) => {
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: QUESTION }];
  const stream = await openai.chat.completions.create({ model: claude.model, messages, tools: chatTools, stream: true, stream_options: { include_usage: true } });
  const problems: string[] = [];
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    problems.push(...openapiProblems('CreateChatCompletionStreamResponse', chunk).map((p) => `chunk ${chunks}: ${p}`));
  }
  t.same(problems, [], `${chunks} chunks match the OpenAPI description`);

  const first = await openai.chat.completions.stream({ model: claude.model, messages, tools: chatTools }).finalChatCompletion();
  const call = first.choices[0]!.message.tool_calls![0]!;
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  if (call.type !== 'function') return t.fail('a function call');
  t.same(JSON.parse(call.function.arguments), WEATHER_TOOL.input, 'the streamed arguments add up');

  messages.push({ role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: WEATHER_RESULT });
  const second = await openai.chat.completions.stream({ model: claude.model, messages, tools: chatTools }).finalChatCompletion();
  t.equal(second.choices[0]!.message.content, FINAL_ANSWER);
  checkTurnTwo(t, claude.up, call.id, '/v1/messages');
});

// ---------------------------------------------------------------------------------------------
// OpenAI Responses client -> Anthropic upstream and a Chat-only upstream

const responsesTools: OpenAI.Responses.Tool[] = [{ type: 'function', name: WEATHER_TOOL.name, description: 'Current weather', parameters: WEATHER_PARAMETERS, strict: false }];

for (const target of [{ name: 'anthropic', r: claude, path: '/v1/messages' }, { name: 'chat-only', r: chatOnly, path: '/v1/chat/completions' }]) {
  t.test(`openai responses -> ${target.name}: tool round trip, not streamed`, async (t) => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
    const first = await openai.responses.create({ model: target.r.model, input, tools: responsesTools });
    t.same(openapiProblems('Response', first), [], 'turn 1 matches the OpenAPI description');
    const call = first.output.find((item) => item.type === 'function_call');
    if (!call || call.type !== 'function_call') return t.fail('a function_call item');
    t.equal(call.name, WEATHER_TOOL.name);
    t.same(JSON.parse(call.arguments), WEATHER_TOOL.input);

    input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: WEATHER_RESULT });
    const second = await openai.responses.create({ model: target.r.model, input, tools: responsesTools });
    t.equal(second.output_text, FINAL_ANSWER);
    t.equal(second.status, 'completed');
    checkTurnTwo(t, target.r.up, call.call_id, target.path);
  });

  t.test(`openai responses -> ${target.name}: tool round trip, streamed`, async (t) => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
    const helper = openai.responses.stream({ model: target.r.model, input, tools: responsesTools });
    const problems: string[] = [];
    const types: string[] = [];
    for await (const event of helper) {
      types.push(event.type);
      problems.push(...openapiProblems(responseStreamEventSchema(event.type), event).map((p) => `${event.type}: ${p}`));
    }
    t.same(problems, [], `${types.length} events match the OpenAPI description`);
    t.equal(types[0], 'response.created');
    t.equal(types.at(-1), 'response.completed');
    const first = await helper.finalResponse();
    const call = first.output.find((item) => item.type === 'function_call');
    if (!call || call.type !== 'function_call') return t.fail('a function_call item');
    t.same(JSON.parse(call.arguments), WEATHER_TOOL.input, 'the streamed arguments add up');

    input.push(call, { type: 'function_call_output', call_id: call.call_id, output: WEATHER_RESULT });
    const stream = await openai.responses.create({ model: target.r.model, input, tools: responsesTools, stream: true });
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    t.equal(text, FINAL_ANSWER);
    checkTurnTwo(t, target.r.up, call.call_id, target.path);
  });
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages client -> OpenAI upstreams: Chat-only, full (Chat is chosen), Responses-only

const messagesTools: Anthropic.Tool[] = [{ name: WEATHER_TOOL.name, description: 'Current weather', input_schema: WEATHER_PARAMETERS as Anthropic.Tool.InputSchema }];

for (const target of [
  { name: 'chat-only', r: chatOnly, path: '/v1/chat/completions' },
  { name: 'openai (all shapes)', r: openaiFull, path: '/v1/chat/completions' },
  { name: 'responses-only', r: responsesOnly, path: '/v1/responses' },
]) {
  for (const streamed of [false, true]) {
    t.test(`anthropic messages -> ${target.name}: tool round trip, ${streamed ? 'streamed' : 'not streamed'}`, async (t) => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: QUESTION }];
      const params = { model: target.r.model, max_tokens: 256, tools: messagesTools };
      const first = streamed
        ? await anthropic.messages.stream({ ...params, messages }).finalMessage()
        : await anthropic.messages.create({ ...params, messages });
      t.equal(first.stop_reason, 'tool_use');
      const call = first.content.find((b) => b.type === 'tool_use');
      if (!call || call.type !== 'tool_use') return t.fail('a tool_use block');
      t.equal(call.name, WEATHER_TOOL.name);
      t.same(call.input, WEATHER_TOOL.input);

      messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: WEATHER_RESULT }] });
      const second = streamed
        ? await anthropic.messages.stream({ ...params, messages }).finalMessage()
        : await anthropic.messages.create({ ...params, messages });
      t.same(second.content.map((b) => (b.type === 'text' ? b.text : b.type)), [FINAL_ANSWER]);
      t.equal(second.stop_reason, 'end_turn');
      checkTurnTwo(t, target.r.up, call.id, target.path);
    });
  }
}
