// A custom (freeform) tool call without input, over real HTTP through Relay from each upstream's
// wire, whole and streamed, to a canonical client (/v1/generate): its input is free text, so no
// input is '' on every path. It was '' from OpenAI (Chat's own custom calls, Responses) but "{}"
// from Bedrock Converse, Anthropic Messages and Gemini, and from a Chat function call to the
// wrapped tool with arguments {} (unwrapCustomInput kept an object without `input` as its JSON).
import t from 'tap';
import http from 'node:http';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeBedrock, type BedrockAction, type StreamMessage } from '../support/fake-bedrock.ts';
import { startFakeGoogle } from '../support/fake-google.ts';
import { startFakeUpstream, type SseFrame } from '../support/fake-upstream.ts';
import { routeLive } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';

const AWS = { accessKeyId: 'AKIAE2ECUSTOMNOINPUT', secretAccessKey: 'e2e/Custom+Secret0123456789abcdefghijklmn' };
const REGION = 'us-east-1';
const GOOGLE_KEY = 'AIza-fake-custom-no-input';

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-bedrock' }, { use: 'vendor-google' }] });
const openaiUp = await startFakeUpstream();
const anthropicUp = await startFakeUpstream();
const bedrock = await startFakeBedrock({ keys: [AWS], region: REGION });
const google = await startFakeGoogle({ apiKey: GOOGLE_KEY });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
  await bedrock.close();
  await google.close();
});

const routes = {
  chat: await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'noinput-chat', shapes: ['openai.chat'] }),
  responses: await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'noinput-responses', shapes: ['openai.responses'] }),
  anthropic: await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'noinput-claude' }),
  bedrock: await seedRoute(relay, {
    baseUrl: `https://bedrock-runtime.${REGION}.amazonaws.com`, adapter: 'bedrock', model: 'noinput-bedrock', upstreamModel: 'amazon.nova-pro-v1:0',
    hostKeys: [`${AWS.accessKeyId}:${AWS.secretAccessKey}`], hostOptions: { region: REGION, endpoint: bedrock.url }, shapes: ['bedrock.converse'],
  }),
  gemini: await seedRoute(relay, { baseUrl: `${google.url}/v1beta`, adapter: 'google', model: 'noinput-gemini', upstreamModel: 'gemini-2.5-flash', hostKeys: [GOOGLE_KEY] }),
};
for (const seeded of Object.values(routes)) await routeLive(relay, seeded);

let bedrockNext: BedrockAction | undefined;
bedrock.script(() => bedrockNext);

const TOOL = 'apply_patch';

/** The tool call a canonical client reads: its arguments and kind, whole or folded from the stream. */
async function generate(route: keyof typeof routes, stream: boolean): Promise<{ status: number; arguments?: string; tool_kind?: string; body: string }> {
  const body = {
    model: routes[route].modelSlug, stream, messages: [{ role: 'user', content: [{ type: 'text', text: 'Apply the patch.' }] }],
    tools: [{ type: 'custom', name: TOOL, description: 'Applies a patch' }],
  };
  const res = await post('/v1/generate', routes[route].relayKey, body);
  if (res.status !== 200) return { status: res.status, body: res.body };
  if (!stream) {
    const call = JSON.parse(res.body).content.find((p: { type: string }) => p.type === 'tool_call');
    return { status: 200, arguments: call?.arguments, tool_kind: call?.tool_kind, body: res.body };
  }
  let call: { arguments: string; tool_kind?: string } | undefined;
  for (const frame of sseFrames(res.body)) {
    const e = JSON.parse(frame.data);
    if (e.type === 'part_start' && e.part.type === 'tool_call') call = { arguments: '', tool_kind: e.part.tool_kind };
    if (e.type === 'delta' && e.delta.type === 'arguments' && call) call.arguments += e.delta.text;
  }
  return { status: 200, arguments: call?.arguments, tool_kind: call?.tool_kind, body: res.body };
}

function post(path: string, key: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(`${relay.inferenceUrl}${path}`), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

// --- Each upstream's answer: one call to the custom tool, without input ---------------------------

const chatAnswer = (call: Record<string, unknown>) => ({
  id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'noinput-chat', usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', ...call }] } }],
});
const chatFrames = (call: Record<string, unknown>): SseFrame[] => {
  const chunk = (delta: unknown, finish: string | null = null) => ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'noinput-chat', choices: [{ index: 0, delta, finish_reason: finish }] });
  return [
    { data: chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', ...call }] }) },
    { data: chunk({}, 'tool_calls') },
    { data: { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'noinput-chat', choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } } },
    { data: '[DONE]' },
  ];
};

const responsesItem = { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_1', name: TOOL, input: '', status: 'completed' };
const responsesAnswer = (output: unknown[], status = 'completed') => ({ id: 'resp_1', object: 'response', created_at: 1, model: 'noinput-responses', status, output, usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 } });
const responsesFrames: SseFrame[] = [
  { event: 'response.created', data: { type: 'response.created', response: responsesAnswer([], 'in_progress') } },
  { event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: 0, item: { ...responsesItem, status: 'in_progress' } } },
  { event: 'response.custom_tool_call_input.done', data: { type: 'response.custom_tool_call_input.done', output_index: 0, item_id: 'ctc_1', input: '' } },
  { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item: responsesItem } },
  { event: 'response.completed', data: { type: 'response.completed', response: responsesAnswer([responsesItem]) } },
];

const claudeUse = { type: 'tool_use', id: 'toolu_1', name: TOOL, input: {} };
const claudeAnswer = { id: 'msg_1', type: 'message', role: 'assistant', model: 'noinput-claude', content: [claudeUse], stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 2 } };
const claudeFrames = (partials: string[]): SseFrame[] => [
  { event: 'message_start', data: { type: 'message_start', message: { ...claudeAnswer, content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: claudeUse } },
  ...partials.map((partial_json): SseFrame => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json } } })),
  { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
  { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 2 } } },
  { event: 'message_stop', data: { type: 'message_stop' } },
];

const USAGE = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };
const converseAnswer = (toolUse: Record<string, unknown>): BedrockAction => ({
  kind: 'json', body: { output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: TOOL, ...toolUse } }] } }, stopReason: 'tool_use', usage: USAGE },
});
const converseStream = (deltas: unknown[]): BedrockAction => ({
  kind: 'events', messages: [
    { event: 'messageStart', payload: { role: 'assistant' } },
    { event: 'contentBlockStart', payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 't1', name: TOOL } } } },
    ...deltas.map((input): StreamMessage => ({ event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input } } } })),
    { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { event: 'messageStop', payload: { stopReason: 'tool_use' } },
    { event: 'metadata', payload: { usage: USAGE, metrics: { latencyMs: 5 } } },
  ],
});

/** Each path a custom call without input reaches canonical by: how the upstream is made to answer so. */
const CASES: Record<string, { route: keyof typeof routes; stream: boolean; arrange: () => void }> = {
  'OpenAI Chat, its own custom call with input ""': { route: 'chat', stream: false, arrange: () => openaiUp.enqueue({ body: chatAnswer({ type: 'custom', custom: { name: TOOL, input: '' } }) }) },
  'OpenAI Chat, its own custom call with input "", streamed': { route: 'chat', stream: true, arrange: () => openaiUp.enqueueStream({ frames: chatFrames({ type: 'custom', custom: { name: TOOL, input: '' } }) }) },
  'OpenAI Chat, a call to the wrapped function with arguments {}': { route: 'chat', stream: false, arrange: () => openaiUp.enqueue({ body: chatAnswer({ type: 'function', function: { name: TOOL, arguments: '{}' } }) }) },
  'OpenAI Chat, a call to the wrapped function with arguments {}, streamed': { route: 'chat', stream: true, arrange: () => openaiUp.enqueueStream({ frames: chatFrames({ type: 'function', function: { name: TOOL, arguments: '{}' } }) }) },
  'OpenAI Chat, a call to the wrapped function with arguments ""': { route: 'chat', stream: false, arrange: () => openaiUp.enqueue({ body: chatAnswer({ type: 'function', function: { name: TOOL, arguments: '' } }) }) },
  'OpenAI Responses, custom_tool_call with input ""': { route: 'responses', stream: false, arrange: () => openaiUp.enqueue({ body: responsesAnswer([responsesItem]) }) },
  'OpenAI Responses, custom_tool_call with input "", streamed': { route: 'responses', stream: true, arrange: () => openaiUp.enqueueStream({ frames: responsesFrames }) },
  'Anthropic Messages, tool_use with input {}': { route: 'anthropic', stream: false, arrange: () => anthropicUp.enqueue({ body: claudeAnswer }) },
  'Anthropic Messages, tool_use with input {}, streamed without a delta': { route: 'anthropic', stream: true, arrange: () => anthropicUp.enqueueStream({ frames: claudeFrames([]) }) },
  'Anthropic Messages, tool_use with input {}, streamed as an empty partial_json': { route: 'anthropic', stream: true, arrange: () => anthropicUp.enqueueStream({ frames: claudeFrames(['']) }) },
  'Anthropic Messages, tool_use streamed as partial_json "{}"': { route: 'anthropic', stream: true, arrange: () => anthropicUp.enqueueStream({ frames: claudeFrames(['{', '}']) }) },
  'Bedrock Converse, toolUse with input {}': { route: 'bedrock', stream: false, arrange: () => { bedrockNext = converseAnswer({ input: {} }); } },
  'Bedrock Converse, toolUse without input': { route: 'bedrock', stream: false, arrange: () => { bedrockNext = converseAnswer({}); } },
  'Bedrock ConverseStream, toolUse without a delta': { route: 'bedrock', stream: true, arrange: () => { bedrockNext = converseStream([]); } },
  'Bedrock ConverseStream, toolUse streamed as "{}"': { route: 'bedrock', stream: true, arrange: () => { bedrockNext = converseStream(['{}']); } },
  'Gemini, functionCall with args {}': { route: 'gemini', stream: false, arrange: () => google.setAnswerParts([{ functionCall: { name: TOOL, args: {} } }]) },
  'Gemini, functionCall without args': { route: 'gemini', stream: false, arrange: () => google.setAnswerParts([{ functionCall: { name: TOOL } }]) },
  'Gemini, functionCall with args {}, streamed': { route: 'gemini', stream: true, arrange: () => google.setAnswerParts([{ functionCall: { name: TOOL, args: {} } }]) },
  'Gemini, functionCall without args, streamed': { route: 'gemini', stream: true, arrange: () => google.setAnswerParts([{ functionCall: { name: TOOL } }]) },
};

for (const [name, c] of Object.entries(CASES)) {
  t.test(name, async (t) => {
    c.arrange();
    const got = await generate(c.route, c.stream);
    t.equal(got.status, 200, got.status === 200 ? 'answered' : got.body.slice(0, 300));
    t.equal(got.tool_kind, 'custom', 'a custom tool call');
    t.equal(got.arguments, '', 'no input is the empty text');
  });
}
