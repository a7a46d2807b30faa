// Scripted model turns for the coding-agent e2e tests: the fake upstream answers like a model
// would. First turn: a tool call (Codex's apply_patch, or Claude Code's Write); once the client
// sends the tool's output back, a final text message.
import { anthropic, openai, sseFrame, type RecordedRequest, type ScriptFn, type ScriptedStream } from './fake-upstream.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

export const HELLO_PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n';
export const FINAL_TEXT = 'Created hello.txt.';

/** A Responses stream whose output is one custom_tool_call (what OpenAI sends for apply_patch). */
export function responsesCustomToolCall(o: { model: string; name: string; input: string; callId?: string; inputTokens?: number; outputTokens?: number }): string[] {
  const callId = o.callId ?? 'call_relay_e2e_apply_patch';
  const respId = 'resp_relay_e2e_custom_tool_call';
  const itemId = 'ctc_relay_e2e_0';
  const base = openai.response({ model: o.model, status: 'in_progress' });
  const usage = {
    input_tokens: o.inputTokens ?? 120,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: o.outputTokens ?? 30,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: (o.inputTokens ?? 120) + (o.outputTokens ?? 30),
  };
  const item = { id: itemId, type: 'custom_tool_call', status: 'completed', call_id: callId, name: o.name, input: o.input };
  let seq = 0;
  const ev = (type: string, body: object) => sseFrame({ event: type, data: { type, ...body, sequence_number: seq++ } });
  const pending = { ...base, id: respId };
  const half = Math.ceil(o.input.length / 2);
  return [
    ev('response.created', { response: pending }),
    ev('response.in_progress', { response: pending }),
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', input: '' } }),
    ev('response.custom_tool_call_input.delta', { item_id: itemId, output_index: 0, delta: o.input.slice(0, half) }),
    ev('response.custom_tool_call_input.delta', { item_id: itemId, output_index: 0, delta: o.input.slice(half) }),
    ev('response.custom_tool_call_input.done', { item_id: itemId, output_index: 0, input: o.input }),
    ev('response.output_item.done', { output_index: 0, item }),
    ev('response.completed', { response: { ...pending, status: 'completed', completed_at: Math.floor(Date.now() / 1000), output: [item], usage } }),
  ];
}

const hasResponsesToolOutput = (req: RecordedRequest): boolean =>
  Array.isArray(req.json?.input) && req.json.input.some((i: { type?: string }) => i?.type === 'custom_tool_call_output' || i?.type === 'function_call_output');

const hasAnthropicToolResult = (req: RecordedRequest): boolean =>
  Array.isArray(req.json?.messages) && req.json.messages.some((m: { content?: unknown }) =>
    Array.isArray(m?.content) && m.content.some((b: { type?: string }) => b?.type === 'tool_result'));

const stream = (frames: string[]): ScriptedStream => ({ headers: SSE_HEADERS, frames });

/** An OpenAI Responses upstream: apply_patch as a custom_tool_call, then text. */
export function responsesApplyPatchScript(patch = HELLO_PATCH): ScriptFn {
  return (req) => {
    if (req.pathname !== '/v1/responses') return undefined;
    const model = String(req.json?.model ?? 'gpt-test');
    if (!hasResponsesToolOutput(req)) return stream(responsesCustomToolCall({ model, name: 'apply_patch', input: patch }));
    return stream(openai.responseEvents({ model, text: FINAL_TEXT, chunks: 3 }));
  };
}

/** An Anthropic upstream: a tool_use of `name` with `input`, then text. */
export function messagesToolUseScript(name: string, input: object): ScriptFn {
  return (req) => {
    if (req.pathname !== '/v1/messages') return undefined;
    const model = String(req.json?.model ?? 'claude-test');
    if (!hasAnthropicToolResult(req)) return stream(anthropic.events({ model, toolCall: { name, input }, chunks: 4 }));
    return stream(anthropic.events({ model, text: FINAL_TEXT, chunks: 3 }));
  };
}
