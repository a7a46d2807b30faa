// Canonical stream events -> Anthropic Messages stream events as SSE.
//
// message_start, then per part content_block_start / content_block_delta / content_block_stop
// with block indexes counted from 0 in the order parts open (text_delta, input_json_delta,
// thinking_delta, signature_delta, citations_delta), then message_delta (stop_reason, usage) and
// message_stop. A web search opens whole: its server_tool_use (input as one input_json_delta) and
// web_search_tool_result blocks start and stop at once.
// Errors are an `event: error` frame. The upstream's usage is known only at the end: message_start
// carries Relay's estimate of the input tokens (clients read context use from it), and
// message_delta the upstream's exact totals (input and cache counts included).
import { emptyUsage, estimateInputTokens, usageToMessages, type StreamEvent } from '../../../core/plugin-api/canonical.ts';
import { sseFrame, type EncodeContext, type StreamEncoder } from '../../../core/plugin-api.ts';
import { anthropicErrorBody } from './errors.ts';
import { anthropicStopReason, messageId } from './messages-response.ts';
import { isRedactedThinking, sealSignature } from './reasoning-envelope.ts';
import { anthropicCitation, webSearchBlocks } from './web-search-blocks.ts';

type BlockState =
  | { kind: 'text' | 'redacted'; block: number; text?: string }
  | { kind: 'tool'; block: number; custom: boolean }
  | { kind: 'thinking'; block: number; origin?: string; encrypted?: string; signature: string };

export function messagesStreamEncoder(ctx: EncodeContext): StreamEncoder {
  let started = false;
  let terminated = false;
  let blocks = 0;
  const open = new Map<number, BlockState>();
  // Counted now: the request is let go at the first byte (translation-source.ts).
  const startUsage = usageToMessages(Object.assign(emptyUsage(), { input_tokens: estimateInputTokens(ctx.request) }));

  const emit = (type: string, payload: Record<string, unknown>): string => sseFrame(type, JSON.stringify({ type, ...payload }));
  const start = (id: string): string => {
    if (started) return '';
    started = true;
    return emit('message_start', {
      message: {
        id: messageId(id), type: 'message', role: 'assistant', model: ctx.model, content: [],
        stop_reason: null, stop_sequence: null, usage: startUsage,
      },
    });
  };
  const blockDelta = (block: number, delta: Record<string, unknown>): string => emit('content_block_delta', { index: block, delta });

  const stop = (index: number): string => {
    const state = open.get(index);
    if (!state) return '';
    open.delete(index);
    let out = '';
    if (state.kind === 'tool' && state.custom) out += blockDelta(state.block, { type: 'input_json_delta', partial_json: '"}' });
    if (state.kind === 'thinking') {
      // OpenAI's late encrypted content arrives as a signature delta on an openai-origin part.
      const late = state.signature === '' ? undefined : state.signature;
      const fields = state.origin === 'openai' && state.encrypted === undefined
        ? { origin: state.origin, encrypted: late }
        : { origin: state.origin, encrypted: state.encrypted, signature: late };
      out += blockDelta(state.block, { type: 'signature_delta', signature: sealSignature(fields) ?? '' });
    }
    return out + emit('content_block_stop', { index: state.block });
  };

  const closeAll = (): string => [...open.keys()].map(stop).join('');

  return {
    contentType: 'text/event-stream; charset=utf-8',
    encode(event: StreamEvent): string {
      if (terminated) return '';
      switch (event.type) {
        case 'start':
          return start(event.id);
        case 'part_start': {
          let out = start(ctx.requestId);
          const part = event.part;
          const block = blocks;
          if (part.type === 'text' || part.type === 'refusal') {
            open.set(event.index, { kind: 'text', block, ...(ctx.request.tools?.some((t) => t.type === 'web_search') ? { text: '' } : {}) });
            out += emit('content_block_start', { index: block, content_block: { type: 'text', text: '' } });
          } else if (part.type === 'tool_call') {
            const custom = part.tool_kind === 'custom';
            open.set(event.index, { kind: 'tool', block, custom });
            out += emit('content_block_start', { index: block, content_block: { type: 'tool_use', id: part.id, name: part.name, input: {} } });
            // A custom call's raw text streams as the JSON string of {"input": ...}.
            if (custom) out += blockDelta(block, { type: 'input_json_delta', partial_json: '{"input":"' });
          } else if (part.type === 'web_search_call') {
            for (const b of webSearchBlocks(part)) {
              const index = blocks++;
              if (b.type === 'server_tool_use') {
                out += emit('content_block_start', { index, content_block: { ...b, input: {} } });
                out += blockDelta(index, { type: 'input_json_delta', partial_json: JSON.stringify(b.input ?? {}) });
              } else out += emit('content_block_start', { index, content_block: b });
              out += emit('content_block_stop', { index });
            }
            return out;
          } else if (part.type === 'reasoning') {
            if (isRedactedThinking(part)) {
              open.set(event.index, { kind: 'redacted', block });
              out += emit('content_block_start', { index: block, content_block: { type: 'redacted_thinking', data: part.encrypted } });
            } else {
              open.set(event.index, { kind: 'thinking', block, origin: part.origin, encrypted: part.encrypted, signature: '' });
              out += emit('content_block_start', { index: block, content_block: { type: 'thinking', thinking: '', signature: '' } });
            }
          } else {
            return out;
          }
          blocks += 1;
          return out;
        }
        case 'delta': {
          const state = open.get(event.index);
          const d = event.delta;
          if (!state) return '';
          if (state.kind === 'text' && (d.type === 'text' || d.type === 'refusal')) {
            if (state.text !== undefined) state.text += d.text;
            return blockDelta(state.block, { type: 'text_delta', text: d.text });
          }
          // OpenAI's citation indexes text already streamed: without cited text of its own, it cites that span.
          if (state.kind === 'text' && d.type === 'citation') return blockDelta(state.block, { type: 'citations_delta', citation: anthropicCitation(d.citation, state.text) });
          if (state.kind === 'tool' && d.type === 'arguments') {
            const partial = state.custom ? JSON.stringify(d.text).slice(1, -1) : d.text;
            return partial === '' ? '' : blockDelta(state.block, { type: 'input_json_delta', partial_json: partial });
          }
          if (state.kind === 'thinking' && d.type === 'reasoning') return blockDelta(state.block, { type: 'thinking_delta', thinking: d.text });
          if (state.kind === 'thinking' && d.type === 'signature') state.signature += d.signature;
          return '';
        }
        case 'part_end':
          return stop(event.index);
        case 'end':
          terminated = true;
          return start(ctx.requestId) + closeAll()
            + emit('message_delta', {
              delta: { stop_reason: anthropicStopReason(event.stop_reason), stop_sequence: event.stop_sequence ?? null },
              usage: usageToMessages(event.usage),
            })
            + emit('message_stop', {});
        case 'error':
          terminated = true;
          return emit('error', { error: anthropicErrorBody(event.error).error });
      }
    },
    finish(): string {
      if (terminated) return '';
      terminated = true;
      return emit('error', { error: anthropicErrorBody({ type: 'upstream', message: 'the upstream stream ended before the message completed' }).error });
    },
  };
}
