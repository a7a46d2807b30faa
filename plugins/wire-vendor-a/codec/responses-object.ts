// Pieces shared by the Responses encoders: the response object around the output, usage,
// and the output items built from canonical parts.
import type { EncodeContext } from '../../../core/plugin-api.ts';
import type { ReasoningPart, StopReason, Usage } from '../../../core/plugin-api/canonical.ts';
import { clientToolCall } from './custom-tool-calls.ts';
import { clientToolName, type NamespacedName } from './namespace-tools.ts';
import { sealReasoning } from './reasoning-envelope.ts';

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/**
 * A translated answer's id is Relay's, made from the request's id (a random UUID): stored
 * responses share one id space, and an upstream may repeat ids or send none.
 */
export function responseId(requestId: string): string {
  return `resp_${requestId.replace(/-/g, '')}`;
}

/** Item ids are unique within a response: `<prefix>_<response id>_<output index>`. */
export function itemId(prefix: 'msg' | 'rs' | 'fc' | 'ctc' | 'ws', responseId: string, outputIndex: number): string {
  return `${prefix}_${responseId.replace(/^resp_/, '')}_${outputIndex}`;
}

export function responsesUsage(usage: Usage): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cache_read_tokens, cache_write_tokens: usage.cache_write_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/**
 * Status and incomplete_details for a stop reason. A paused turn (Anthropic pause_turn) is
 * `completed`: Responses has no such reason (`incomplete` makes clients such as Codex fail the
 * turn); its unfinished search item says status `in_progress`.
 */
export function completion(reason: StopReason): { status: ResponseStatus; incomplete_details: { reason: string } | null } {
  if (reason === 'max_tokens') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  if (reason === 'error') return { status: 'failed', incomplete_details: null };
  return { status: 'completed', incomplete_details: null };
}

const field = (inbound: Record<string, unknown>, key: string, fallback: unknown): unknown => inbound[key] ?? fallback;

/**
 * The request's tools as the response object echoes them. OpenAI's Response schema requires
 * `strict` and `parameters` on a function tool (null allowed), while a request may leave them
 * out: they are echoed as null then, instead of producing an object the schema rejects.
 */
function echoedTools(tools: unknown): unknown[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool: unknown) => {
    if (tool === null || typeof tool !== 'object' || (tool as { type?: unknown }).type !== 'function') return tool;
    const fn = tool as Record<string, unknown>;
    // `fn` is the client's own object, copied as spread copies it.
    return { type: fn.type, ...fn, parameters: fn.parameters ?? null, strict: fn.strict ?? null };
  });
}

/** The response object, echoing the request's settings the way the Responses API does. */
export function responseObject(ctx: EncodeContext, id: string, createdAt: number, status: ResponseStatus): Record<string, unknown> {
  const inbound = (ctx.inbound !== null && typeof ctx.inbound === 'object' ? ctx.inbound : {}) as Record<string, unknown>;
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: typeof inbound.instructions === 'string' ? inbound.instructions : null,
    max_output_tokens: field(inbound, 'max_output_tokens', null),
    model: ctx.model,
    output: [],
    parallel_tool_calls: ctx.request.parallel_tool_calls ?? true,
    previous_response_id: typeof inbound.previous_response_id === 'string' ? inbound.previous_response_id : null,
    reasoning: field(inbound, 'reasoning', null),
    store: ctx.stored === true,
    temperature: field(inbound, 'temperature', null),
    text: field(inbound, 'text', { format: { type: 'text' } }),
    tool_choice: field(inbound, 'tool_choice', 'auto'),
    tools: echoedTools(inbound.tools),
    top_p: field(inbound, 'top_p', null),
    truncation: 'disabled',
    metadata: field(inbound, 'metadata', {}),
  };
}

export function outputText(text: string, annotations: unknown[] = []): Record<string, unknown> {
  return { type: 'output_text', text, annotations, logprobs: [] };
}

export function refusalContent(text: string): Record<string, unknown> {
  return { type: 'refusal', refusal: text };
}

export function messageItem(id: string, content: unknown[], status: 'in_progress' | 'completed'): Record<string, unknown> {
  return { id, type: 'message', status, role: 'assistant', content };
}

export function reasoningItem(id: string, part: Pick<ReasoningPart, 'text' | 'origin' | 'signature' | 'encrypted'>, done: boolean): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id, type: 'reasoning',
    summary: done && part.text ? [{ type: 'summary_text', text: part.text }] : [],
  };
  const sealed = sealReasoning(part);
  if (sealed !== undefined) item.encrypted_content = sealed;
  return item;
}

export interface ToolCallFields {
  callId: string;
  name: string;
  arguments: string;
  toolKind?: 'function' | 'custom';
}

/** A function_call or custom_tool_call item, with namespace restored and custom input unwrapped. */
export function toolCallItem(
  responseIdValue: string, outputIndex: number, call: ToolCallFields,
  customTools: ReadonlySet<string>, namespaces: ReadonlyMap<string, NamespacedName>, status: 'in_progress' | 'completed',
): Record<string, unknown> {
  const kind = clientToolCall({ name: call.name, arguments: call.arguments, tool_kind: call.toolKind }, customTools);
  const named = clientToolName(call.name, namespaces);
  const ns = named.namespace === undefined ? {} : { namespace: named.namespace };
  if (kind.kind === 'custom') {
    return { id: itemId('ctc', responseIdValue, outputIndex), type: 'custom_tool_call', status, call_id: call.callId, ...ns, name: named.name, input: kind.input };
  }
  return { id: itemId('fc', responseIdValue, outputIndex), type: 'function_call', status, call_id: call.callId, ...ns, name: named.name, arguments: kind.input };
}
