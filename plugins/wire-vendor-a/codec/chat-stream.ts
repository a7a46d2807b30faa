// Canonical stream events -> OpenAI Chat Completions chunks (`chat.completion.chunk`) as SSE.
// The first chunk carries the role; tool calls open with index, id and name, then stream
// their arguments (a custom tool's call, as OpenAI streams it: type "custom", then
// `custom: {input}` pieces); the last chunk carries finish_reason; when the client asked for
// stream_options.include_usage a usage chunk (choices: []) follows; then `data: [DONE]`.
import { sseFrame, type EncodeContext, type StreamEncoder } from '../../../core/plugin-api.ts';
import { type StreamEvent } from '../../../core/plugin-api/canonical.ts';
import { chatCompletionId, chatUsage, finishReason, TEXT_PART_SEPARATOR } from './chat-response.ts';
import { clientToolCall, customToolNames, unwrapCustomInput } from './custom-tool-calls.ts';
import { openaiErrorBody } from './errors.ts';

interface ToolState {
  chatIndex: number;
  /** A custom tool's call: its pieces go in `custom.input`, not `function.arguments`. */
  custom: boolean;
  /** Custom tool arriving as a wrapped function call: buffered, unwrapped at its end. */
  buffered: string | null;
}

/** A later piece of a call: no type or id, as OpenAI sends them. */
function toolPiece(state: ToolState, text: string): Record<string, unknown> {
  return state.custom ? { index: state.chatIndex, custom: { input: text } } : { index: state.chatIndex, function: { arguments: text } };
}

function wantsUsage(inbound: unknown): boolean {
  const options = (inbound as { stream_options?: { include_usage?: unknown } } | null)?.stream_options;
  return options?.include_usage === true;
}

export function chatStreamEncoder(ctx: EncodeContext): StreamEncoder {
  const includeUsage = wantsUsage(ctx.inbound);
  const custom = customToolNames(ctx.request);
  const created = Math.floor(Date.now() / 1000);
  let id = chatCompletionId(ctx.requestId);
  let started = false;
  let done = false;
  let failed = false;
  let textParts = 0;
  let toolCalls = 0;
  const tools = new Map<number, ToolState>();
  const kinds = new Map<number, 'text' | 'refusal' | 'tool' | 'other'>();

  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string => sseFrame(undefined, JSON.stringify({
    id, object: 'chat.completion.chunk', created, model: ctx.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  }));
  const opening = (): string => {
    if (started) return '';
    started = true;
    return chunk({ role: 'assistant', content: '' });
  };

  return {
    contentType: 'text/event-stream; charset=utf-8',
    encode(event: StreamEvent): string {
      if (done) return '';
      switch (event.type) {
        case 'start':
          id = chatCompletionId(event.id);
          return opening();
        case 'part_start': {
          const part = event.part;
          if (part.type === 'text') {
            kinds.set(event.index, 'text');
            return opening() + (textParts++ > 0 ? chunk({ content: TEXT_PART_SEPARATOR }) : '');
          }
          if (part.type === 'refusal') {
            kinds.set(event.index, 'refusal');
            return opening();
          }
          if (part.type === 'tool_call') {
            kinds.set(event.index, 'tool');
            const call = clientToolCall({ name: part.name, arguments: '', tool_kind: part.tool_kind }, custom);
            const wrapped = call.kind === 'custom' && part.tool_kind !== 'custom';
            const state: ToolState = { chatIndex: toolCalls++, custom: call.kind === 'custom', buffered: wrapped ? '' : null };
            tools.set(event.index, state);
            const head = state.custom
              ? { index: state.chatIndex, id: part.id, type: 'custom', custom: { name: part.name, input: '' } }
              : { index: state.chatIndex, id: part.id, type: 'function', function: { name: part.name, arguments: '' } };
            return opening() + chunk({ tool_calls: [head] });
          }
          kinds.set(event.index, 'other');
          return opening();
        }
        case 'delta': {
          const kind = kinds.get(event.index);
          const delta = event.delta;
          if (kind === 'text' && delta.type === 'text') return chunk({ content: delta.text });
          if (kind === 'refusal' && delta.type === 'refusal') return chunk({ refusal: delta.text });
          if (kind === 'tool' && delta.type === 'arguments') {
            const state = tools.get(event.index)!;
            if (state.buffered !== null) {
              state.buffered += delta.text;
              return '';
            }
            return chunk({ tool_calls: [toolPiece(state, delta.text)] });
          }
          return ''; // reasoning and signatures: dropped by rule
        }
        case 'part_end': {
          const state = tools.get(event.index);
          if (state && state.buffered !== null) {
            const input = unwrapCustomInput(state.buffered);
            state.buffered = null;
            return chunk({ tool_calls: [toolPiece(state, input)] });
          }
          return '';
        }
        case 'end': {
          done = true;
          let out = opening() + chunk({}, finishReason(event.stop_reason));
          if (includeUsage) {
            out += sseFrame(undefined, JSON.stringify({ id, object: 'chat.completion.chunk', created, model: ctx.model, choices: [], usage: chatUsage(event.usage) }));
          }
          return out;
        }
        case 'error':
          done = true;
          failed = true;
          return sseFrame(undefined, JSON.stringify(openaiErrorBody(event.error)));
      }
    },
    finish(): string {
      return failed ? '' : sseFrame(undefined, '[DONE]');
    },
  };
}
