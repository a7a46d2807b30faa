// Codex's tools through non-OpenAI-Responses upstreams (SPEC "Client integration:
// Responses-API agent client"): the custom apply_patch tool with a Lark grammar and a
// `namespace` grouping, through Anthropic Messages and Chat Completions, streamed and not.
import t from 'tap';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import { responsesCodec, chatCodec } from '../../plugins/wire-vendor-a/codec/index.ts';
import { fakeRoute } from '../support/fake-route.ts';
import { openapiProblems } from '../support/openapi-schemas.ts';
import { sseFrames, sseText } from '../support/sse-frames.ts';
import { context, decodeStream, encodeStream, streamProblems, vendorFor, type UpstreamShape } from './harness.ts';
import { UPSTREAM_CASE_VENDORS } from './upstream-cases.ts';
import { PROMPT_FILTER_RESULTS, azureChatStream } from './fixtures/azure.ts';
import { APPLY_PATCH_GRAMMAR } from './fixtures/requests.ts';

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello "world"\\n\n*** End Patch\n';
const SPAWN_ARGS = '{"message":"review the diff"}';

const CODEX_REQUEST = {
  model: 'claude-sonnet',
  stream: true,
  store: false,
  include: ['reasoning.encrypted_content'],
  parallel_tool_calls: false,
  reasoning: { effort: 'medium', summary: 'auto' },
  tool_choice: 'auto',
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Create hello.txt' }] },
    { type: 'custom_tool_call', id: 'ctc_0', call_id: 'call_prev', name: 'apply_patch', input: PATCH, status: 'completed' },
    { type: 'custom_tool_call_output', call_id: 'call_prev', output: 'Success. Updated the following files:\nA hello.txt' },
    { type: 'function_call', call_id: 'call_ns_prev', namespace: 'multi_agent_v1', name: 'spawn_agent', arguments: SPAWN_ARGS },
    { type: 'function_call_output', call_id: 'call_ns_prev', output: 'agent 1 started' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Now again' }] },
  ],
  tools: [
    { type: 'function', name: 'exec_command', description: 'Runs a command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } },
    { type: 'custom', name: 'apply_patch', description: 'Use the apply_patch tool to edit files.', format: { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } },
    {
      type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents',
      tools: [
        { type: 'function', name: 'spawn_agent', description: 'Spawn an agent', strict: false, parameters: { type: 'object', properties: { message: { type: 'string' } } } },
        { type: 'function', name: 'send_input', description: 'Message an agent', strict: false, parameters: { type: 'object', properties: { id: { type: 'string' } } } },
      ],
    },
    { type: 'web_search', external_web_access: false },
    { type: 'tool_search', description: 'Search tools' },
  ],
  prompt_cache_key: 'thread-1',
  client_metadata: { a: 'b' },
};

const AS_SENT = { stream: (sse: string) => sse, body: (json: unknown) => json };
/** Each upstream without custom tools, and Azure OpenAI (OpenAI's chat wire with its content-filter annotations). */
const UPSTREAM_CASES = [
  { label: 'anthropic.messages', shape: 'anthropic.messages' as UpstreamShape, vendor: vendorFor('anthropic.messages'), wire: AS_SENT },
  { label: 'openai.chat', shape: 'openai.chat' as UpstreamShape, vendor: vendorFor('openai.chat'), wire: AS_SENT },
  {
    label: 'azure-openai openai.chat', shape: 'openai.chat' as UpstreamShape, vendor: UPSTREAM_CASE_VENDORS['azure-openai'],
    wire: { stream: azureChatStream, body: (json: unknown) => ({ ...(json as object), prompt_filter_results: PROMPT_FILTER_RESULTS }) },
  },
];

t.test('Codex request decodes: custom tool kept, namespace flattened, web search mapped, other server tools dropped', async (t) => {
  const request = responsesCodec.decodeRequest(CODEX_REQUEST);
  t.same(request.tools?.map((tool) => `${tool.type}:${'name' in tool ? tool.name : ''}`), [
    'function:exec_command', 'custom:apply_patch', 'function:multi_agent_v1__spawn_agent', 'function:multi_agent_v1__send_input', 'web_search:',
  ]);
  const named = responsesCodec.droppedParameters?.(CODEX_REQUEST) ?? [];
  t.ok(named.includes('tools.tool_search') && named.includes('tools.web_search.external_web_access'), 'tool_search and the cache-only search mode are named');
  t.notOk(named.includes('tools.web_search'), 'web search is not dropped');
  t.same(request.system, [{ type: 'text', text: 'You are Codex.' }]);
  const calls = request.messages.flatMap((m) => m.content).filter((p) => p.type === 'tool_call');
  t.same(calls, [
    { type: 'tool_call', id: 'call_prev', name: 'apply_patch', arguments: PATCH, tool_kind: 'custom' },
    { type: 'tool_call', id: 'call_ns_prev', name: 'multi_agent_v1__spawn_agent', arguments: SPAWN_ARGS, tool_kind: 'function' },
  ]);
  t.equal(request.messages.flatMap((m) => m.content).filter((p) => p.type === 'tool_result').length, 2);
});

function upstreamTools(shape: UpstreamShape, body: unknown): Array<{ name: string; description: string; schema: Record<string, unknown> }> {
  if (shape === 'anthropic.messages') {
    // Typed tools (web_search_20250305) are Anthropic's server tools, not client tools.
    return (body as { tools: Array<{ type?: string; name: string; description: string; input_schema: Record<string, unknown> }> }).tools
      .filter((tool) => tool.type === undefined).map((tool) => ({ name: tool.name, description: tool.description, schema: tool.input_schema }));
  }
  return (body as { tools: Array<{ function: { name: string; description: string; parameters: Record<string, unknown> } }> }).tools
    .map((tool) => ({ name: tool.function.name, description: tool.function.description, schema: tool.function.parameters }));
}

/** The previous apply_patch call as the upstream sees it in the history. */
function historyPatchInput(shape: UpstreamShape, body: unknown): unknown {
  if (shape === 'anthropic.messages') {
    const blocks = (body as { messages: Array<{ content: Array<{ type: string; id?: string; input?: unknown }> }> }).messages.flatMap((m) => m.content);
    return blocks.find((b) => b.type === 'tool_use' && b.id === 'call_prev')?.input;
  }
  const calls = (body as { messages: Array<{ tool_calls?: Array<{ id: string; function: { arguments: string } }> }> }).messages.flatMap((m) => m.tool_calls ?? []);
  return JSON.parse(calls.find((c) => c.id === 'call_prev')!.function.arguments);
}

t.test('upstreams without custom tools see apply_patch as a tool with one string "input"', async (t) => {
  const request = responsesCodec.decodeRequest(CODEX_REQUEST);
  for (const { label, shape: upstream, vendor, wire } of UPSTREAM_CASES) {
    const body = vendor.encodeRequest(upstream, request, fakeRoute());
    const tools = upstreamTools(upstream, body);
    const patch = tools.find((tool) => tool.name === 'apply_patch')!;
    t.same(patch.schema.required, ['input'], `${label}: input is required`);
    t.same(Object.keys(patch.schema.properties as object), ['input'], `${label}: the only parameter`);
    t.equal((patch.schema.properties as { input: { type: string } }).input.type, 'string');
    t.match(patch.description, /Use the apply_patch tool/, `${label}: keeps the description`);
    t.match(patch.description, /lark grammar/, `${label}: says what the grammar is`);
    t.ok(patch.description.includes(APPLY_PATCH_GRAMMAR), `${label}: includes the grammar definition`);
    t.ok(tools.some((tool) => tool.name === 'multi_agent_v1__spawn_agent'), `${label}: namespace member flattened`);
    t.notOk(tools.some((tool) => /web_search|tool_search/.test(tool.name)), `${label}: server tools are no client tools`);
    const webSearch = (body as { tools: Array<{ type?: string }> }).tools.filter((tool) => tool.type === 'web_search_20250305');
    t.equal(webSearch.length, upstream === 'anthropic.messages' ? 1 : 0, `${label}: web search ${upstream === 'anthropic.messages' ? 'mapped' : 'dropped'}`);
    t.same(historyPatchInput(upstream, body), { input: PATCH }, `${label}: the previous custom call is wrapped as {"input": ...}`);
  }
});

/** The upstream's answer: an apply_patch call and a namespaced sub-agent call. */
function upstreamResponse(shape: UpstreamShape): unknown {
  if (shape === 'anthropic.messages') {
    return {
      id: 'msg_9', type: 'message', role: 'assistant', model: 'claude-sonnet',
      content: [
        { type: 'text', text: 'Patching.' },
        { type: 'tool_use', id: 'toolu_patch', name: 'apply_patch', input: { input: PATCH } },
        { type: 'tool_use', id: 'toolu_spawn', name: 'multi_agent_v1__spawn_agent', input: { message: 'review the diff' } },
      ],
      stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 90 },
    };
  }
  return {
    id: 'chatcmpl-9', object: 'chat.completion', created: 1, model: 'llama',
    choices: [{
      index: 0, logprobs: null, finish_reason: 'tool_calls',
      message: {
        role: 'assistant', content: 'Patching.',
        tool_calls: [
          { id: 'toolu_patch', type: 'function', function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) } },
          { id: 'toolu_spawn', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: SPAWN_ARGS } },
        ],
      },
    }],
    usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 90 } },
  };
}

/** The same answer streamed, the patch's JSON cut at awkward places (inside escapes). */
function upstreamStream(shape: UpstreamShape): string {
  const patchJson = JSON.stringify({ input: PATCH });
  const pieces = [patchJson.slice(0, 7), patchJson.slice(7, 30), patchJson.slice(30, 61), patchJson.slice(61)];
  if (shape === 'anthropic.messages') {
    const delta = (index: number, partial: string) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } } });
    return sseText([
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_9', type: 'message', role: 'assistant', model: 'claude-sonnet', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 1 } } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Patching.' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_patch', name: 'apply_patch', input: {} } } },
      ...pieces.map((p) => delta(1, p)),
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_spawn', name: 'multi_agent_v1__spawn_agent', input: {} } } },
      delta(2, SPAWN_ARGS.slice(0, 10)), delta(2, SPAWN_ARGS.slice(10)),
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 2 } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  }
  const chunk = (delta: unknown, finish: string | null = null) => ({ data: { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [{ index: 0, delta, finish_reason: finish }] } });
  return sseText([
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Patching.' }),
    chunk({ tool_calls: [{ index: 0, id: 'toolu_patch', type: 'function', function: { name: 'apply_patch', arguments: '' } }] }),
    ...pieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    chunk({ tool_calls: [{ index: 1, id: 'toolu_spawn', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: SPAWN_ARGS } }] }),
    chunk({}, 'tool_calls'),
    { data: { id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'llama', choices: [], usage: { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105, prompt_tokens_details: { cached_tokens: 90 } } } },
    { data: '[DONE]' },
  ]);
}

interface OutputItem { type: string; name: string; namespace?: string; input?: string; arguments?: string; call_id: string }

type Asserts = Pick<typeof t, 'equal'>;

function checkOutput(t: Asserts, items: OutputItem[], label: string): void {
  const patch = items.find((i) => i.call_id === 'toolu_patch');
  t.equal(patch?.type, 'custom_tool_call', `${label}: apply_patch comes back as a custom_tool_call`);
  t.equal(patch?.name, 'apply_patch');
  t.equal(patch?.input, PATCH, `${label}: with the raw patch as input`);
  const spawn = items.find((i) => i.call_id === 'toolu_spawn');
  t.equal(spawn?.type, 'function_call', `${label}: namespace member comes back as a function_call`);
  t.equal(spawn?.name, 'spawn_agent', `${label}: named as inside its namespace`);
  t.equal(spawn?.namespace, 'multi_agent_v1', `${label}: with its namespace`);
  t.equal(spawn?.arguments, SPAWN_ARGS);
}

t.test('non-streamed: the client gets its custom and namespaced calls back', async (t) => {
  for (const { label, shape: upstream, vendor, wire } of UPSTREAM_CASES) {
    const request = responsesCodec.decodeRequest(CODEX_REQUEST);
    const route = fakeRoute();
    vendor.encodeRequest(upstream, request, route);
    const canonical = vendor.decodeResponse(upstream, wire.body(upstreamResponse(upstream)), route, request);
    const patch = canonical.content.find((p) => p.type === 'tool_call' && p.name === 'apply_patch');
    t.same(patch, { type: 'tool_call', id: 'toolu_patch', name: 'apply_patch', arguments: PATCH, tool_kind: 'custom' }, `${label}: unwrapped by the adapter`);
    const body = responsesCodec.encodeResponse(canonical, context(request, CODEX_REQUEST, 'claude-sonnet')) as { output: OutputItem[] };
    t.same(openapiProblems('Response', body), [], `${label}: a valid Response`);
    checkOutput(t, body.output, label);
  }
});

t.test('streamed: custom_tool_call_input events carry the raw patch', async (t) => {
  for (const { label, shape: upstream, vendor, wire } of UPSTREAM_CASES) {
    const request = responsesCodec.decodeRequest(CODEX_REQUEST);
    const route = fakeRoute();
    vendor.encodeRequest(upstream, request, route);
    const events = decodeStream(upstream, wire.stream(upstreamStream(upstream)), route, request, vendor);
    const sse = encodeStream('openai.responses', context(request, CODEX_REQUEST, 'claude-sonnet'), events);
    t.same(await streamProblems('openai.responses', sse), [], `${label}: every event matches the OpenAPI description`);
    const frames = sseFrames(sse).map((f) => JSON.parse(f.data) as Record<string, unknown>);
    const deltas = frames.filter((f) => f.type === 'response.custom_tool_call_input.delta').map((f) => f.delta as string).join('');
    t.equal(deltas, PATCH, `${label}: input deltas add up to the patch`);
    const done = frames.find((f) => f.type === 'response.custom_tool_call_input.done');
    t.equal(done?.input, PATCH, `${label}: .done carries the patch`);
    const argsDone = frames.find((f) => f.type === 'response.function_call_arguments.done');
    t.equal(argsDone?.arguments, SPAWN_ARGS);
    const items = frames.filter((f) => f.type === 'response.output_item.done').map((f) => f.item as OutputItem);
    checkOutput(t, items, `${label} stream`);
    const completed = frames.at(-1) as { type: string; response: { id: string; output: OutputItem[]; usage: Record<string, unknown> } };
    t.equal(completed.type, 'response.completed');
    t.ok(completed.response.id, 'response.completed carries response.id');
    t.match(completed.response.usage, { input_tokens: 100, output_tokens: 5, total_tokens: 105, input_tokens_details: { cached_tokens: 90 }, output_tokens_details: { reasoning_tokens: 0 } });
    checkOutput(t, completed.response.output, `${label} response.completed`);
  }
});

t.test('the next turn sends the call back the way the upstream saw it', async (t) => {
  for (const { label, shape: upstream, vendor, wire } of UPSTREAM_CASES) {
    const request = responsesCodec.decodeRequest(CODEX_REQUEST);
    const route = fakeRoute();
    vendor.encodeRequest(upstream, request, route);
    const body = responsesCodec.encodeResponse(vendor.decodeResponse(upstream, wire.body(upstreamResponse(upstream)), route), context(request, CODEX_REQUEST)) as { output: unknown[] };
    const next = { ...CODEX_REQUEST, input: [...CODEX_REQUEST.input, ...body.output, { type: 'custom_tool_call_output', call_id: 'toolu_patch', output: 'Success' }] };
    const nextRequest = responsesCodec.decodeRequest(next);
    const calls = nextRequest.messages.flatMap((m) => m.content).filter((p) => p.type === 'tool_call');
    t.same(calls.slice(-2).map((c) => (c as { name: string }).name), ['apply_patch', 'multi_agent_v1__spawn_agent'], `${label}: names restored to canonical`);
    const upstreamBody = vendor.encodeRequest(upstream, nextRequest, fakeRoute());
    const text = JSON.stringify(upstreamBody);
    t.ok(text.includes(JSON.stringify(JSON.stringify({ input: PATCH })).slice(1, -1)) || text.includes(JSON.stringify({ input: PATCH })), `${label}: the new call is wrapped again`);
  }
});

t.test('safety net: a wrapped call the adapter did not unwrap is unwrapped for the client', async (t) => {
  const request = responsesCodec.decodeRequest(CODEX_REQUEST);
  for (const { label, shape: upstream, vendor, wire } of UPSTREAM_CASES) {
    // A route object the encoder never saw: the adapter cannot know apply_patch is custom.
    const canonical = vendor.decodeResponse(upstream, wire.body(upstreamResponse(upstream)), fakeRoute());
    t.equal(canonical.content.find((p) => p.type === 'tool_call' && p.name === 'apply_patch')?.type, 'tool_call');
    const body = responsesCodec.encodeResponse(canonical, context(request, CODEX_REQUEST)) as { output: OutputItem[] };
    checkOutput(t, body.output, `${label} non-streamed`);
    const sse = encodeStream('openai.responses', context(request, CODEX_REQUEST), decodeStream(upstream, wire.stream(upstreamStream(upstream)), fakeRoute(), undefined, vendor));
    t.same(await streamProblems('openai.responses', sse), []);
    const frames = sseFrames(sse).map((f) => JSON.parse(f.data) as Record<string, unknown>);
    t.equal(frames.find((f) => f.type === 'response.custom_tool_call_input.done')?.input, PATCH, `${label} streamed`);
  }
});

t.test('Chat clients with custom tools get type "custom" calls back', async (t) => {
  const chatRequest = {
    model: 'claude-sonnet',
    messages: [{ role: 'user', content: 'patch it' }],
    tools: [{ type: 'custom', custom: { name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', grammar: { syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } } } }],
  };
  const request: CanonicalRequest = chatCodec.decodeRequest(chatRequest);
  t.same(request.tools, [{ type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'grammar', syntax: 'lark', definition: APPLY_PATCH_GRAMMAR } }]);
  const route = fakeRoute();
  vendorFor('anthropic.messages').encodeRequest('anthropic.messages', request, route);
  const canonical = vendorFor('anthropic.messages').decodeResponse('anthropic.messages', upstreamResponse('anthropic.messages'), route, request);
  const body = chatCodec.encodeResponse(canonical, context(request, chatRequest)) as { choices: Array<{ message: { tool_calls: Array<Record<string, unknown>> } }> };
  t.same(openapiProblems('CreateChatCompletionResponse', body), []);
  t.same(body.choices[0].message.tool_calls[0], { id: 'toolu_patch', type: 'custom', custom: { name: 'apply_patch', input: PATCH } });
  const sse = encodeStream('openai.chat', context(request, chatRequest), decodeStream('anthropic.messages', upstreamStream('anthropic.messages'), route, request));
  t.same(await streamProblems('openai.chat', sse), []);
  const pieces = sseFrames(sse).filter((f) => f.data !== '[DONE]')
    .flatMap((f) => (JSON.parse(f.data) as { choices: Array<{ delta: { tool_calls?: Array<{ index: number; type?: string; function?: unknown; custom?: { name?: string; input?: string } }> } }> }).choices)
    .flatMap((c) => c.delta.tool_calls ?? []).filter((c) => c.index === 0);
  t.match(pieces[0], { type: 'custom', custom: { name: 'apply_patch' } }, 'streamed Chat opens a custom call, as OpenAI streams one');
  t.equal(pieces.map((c) => c.custom?.input ?? '').join(''), PATCH, 'its custom.input pieces carry the raw patch');
  t.ok(pieces.every((c) => c.function === undefined), 'and no function arguments');
});
