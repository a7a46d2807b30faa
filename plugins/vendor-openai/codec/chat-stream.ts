// OpenAI Chat Completions stream chunks -> canonical stream events.
//
// Text, refusal and reasoning: one such part is open at a time, and a chunk of another kind
// closes it. Tool calls stay open, each by its chat index, until the stream ends: a server may
// send deltas for tool_calls[0], then [1], then [0] again, so their canonical parts may
// interleave (every event names its part's index). The stream ends at `data: [DONE]` (or when the
// upstream closes after a finish_reason), after the usage chunk that stream_options.include_usage adds.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import { emptyUsage, setAnswerModel, type StopReason, type StreamEvent, type Usage } from '../../../core/plugin-api/canonical.ts';
import { type Route, type StreamDecoder } from '../../../core/plugin-api.ts';
import { customToolNames, parseFrame, toolArgumentsText, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { chatCitations, reasoningText, stopReasonFromChat } from './chat-response.ts';
import { nameKind, TOOL_ARGUMENTS_NAME } from './answer-names.ts';
import { chatContentPieces } from './chat-content.ts';
import { upstreamStreamError } from './stream-errors.ts';
import { chunkUsage, usageFromChat, withServiceTier } from './usage.ts';

interface OpenText { kind: 'text' | 'refusal' | 'reasoning'; index: number }
interface OpenCall { index: number; chatIndex: number; id: string; buffer: string | null }

interface ChunkDelta {
  content?: unknown; refusal?: unknown; reasoning_content?: unknown; reasoning?: unknown; annotations?: unknown; audio?: unknown;
  tool_calls?: Array<{ index?: unknown; id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown }; custom?: { name?: unknown; input?: unknown } | null }>;
}

export function chatStreamDecoder(route: Route, request?: CanonicalRequest, dropped: string[] = []): StreamDecoder {
  const custom = customToolNames(request);
  let started = false;
  let ended = false;
  let next = 0;
  // The chat index a tool-call delta without one gets when it starts a call: past every index seen.
  let freeChatIndex = 0;
  let open: OpenText | null = null;
  const calls = new Map<number, OpenCall>();
  // The call a delta without index or id continues: the one opened last.
  let lastCall: OpenCall | null = null;
  let finish: unknown = null;
  let refusal = false;
  let usage: Usage | null = null;
  /** The tier and model the chunks say the answer runs on (every chunk carries them; the usage chunk is the last). */
  let tier: unknown;
  let model: unknown;

  const close = (): StreamEvent[] => {
    if (!open) return [];
    const index = open.index;
    open = null;
    return [{ type: 'part_end', index }];
  };
  const closeCall = (call: OpenCall): StreamEvent[] => {
    const out: StreamEvent[] = [];
    if (call.buffer !== null) {
      const input = unwrapCustomInput(call.buffer);
      if (input !== '') out.push({ type: 'delta', index: call.index, delta: { type: 'arguments', text: input } });
    }
    out.push({ type: 'part_end', index: call.index });
    return out;
  };
  const closeAll = (): StreamEvent[] => {
    const out = close();
    for (const call of calls.values()) out.push(...closeCall(call));
    calls.clear();
    lastCall = null;
    return out;
  };
  const openPart = (kind: 'text' | 'refusal' | 'reasoning'): StreamEvent[] => {
    if (open?.kind === kind) return [];
    const out = close();
    open = { kind, index: next++ };
    out.push({ type: 'part_start', index: open.index, part: kind === 'reasoning' ? { type: 'reasoning', origin: 'openai' } : { type: kind } });
    return out;
  };
  // OpenAI always numbers tool-call deltas; some compatible servers (Gemini's OpenAI endpoint,
  // self-hosted ones) do not. Reading a missing index as 0 would merge parallel calls into one,
  // so without an index a delta with an id other than the last opened call's starts a new call,
  // and a delta without id continues that call.
  const indexFor = (id: unknown): number => {
    if (lastCall === null) return freeChatIndex;
    const continues = id === undefined || id === null || id === '' || String(id) === lastCall.id;
    return continues ? lastCall.chatIndex : freeChatIndex;
  };
  const end = (): StreamEvent[] => {
    if (ended) return [];
    ended = true;
    const stop: StopReason = stopReasonFromChat(finish, refusal);
    return [...closeAll(), { type: 'end', stop_reason: stop, usage: usage ?? emptyUsage() }];
  };

  return {
    decode(_event: string | undefined, data: string): StreamEvent[] {
      if (ended) return [];
      if (data.trim() === '[DONE]') return end();
      const chunk = parseFrame<{ id?: unknown; model?: unknown; choices?: unknown; usage?: unknown; x_groq?: unknown; error?: unknown; service_tier?: unknown }>(data);
      if (chunk === null) return [];
      const out: StreamEvent[] = [];
      if (chunk.error !== undefined) {
        ended = true;
        return [...closeAll(), upstreamStreamError(chunk.error)];
      }
      if (!started) {
        started = true;
        out.push({ type: 'start', id: typeof chunk.id === 'string' ? chunk.id : '', model: typeof chunk.model === 'string' ? chunk.model : route.upstreamModel });
      }
      if (chunk.service_tier !== undefined) tier = chunk.service_tier;
      if (chunk.model) model = chunk.model;
      const reported = chunkUsage(chunk);
      if (reported) usage = setAnswerModel(withServiceTier(usageFromChat(reported), tier), model);
      const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as { delta?: ChunkDelta; finish_reason?: unknown } | undefined) : undefined;
      const delta = choice?.delta ?? {};
      const reasoning = reasoningText(delta as Record<string, unknown>);
      if (reasoning !== undefined) out.push(...openPart('reasoning'), { type: 'delta', index: open!.index, delta: { type: 'reasoning', text: reasoning } });
      for (const piece of chatContentPieces(delta.content, dropped)) {
        out.push(...openPart(piece.kind), { type: 'delta', index: open!.index, delta: piece.kind === 'text' ? { type: 'text', text: piece.text } : { type: 'reasoning', text: piece.text } });
      }
      // A search model's citations come in a late chunk, for the text open then.
      const citations = chatCitations(delta.annotations, undefined, dropped);
      const text = open as OpenText | null;
      for (const citation of citations) {
        if (text?.kind === 'text') out.push({ type: 'delta', index: text.index, delta: { type: 'citation', citation } });
        else nameKind('url_citation', dropped);
      }
      if (delta.audio !== undefined && delta.audio !== null) nameKind('audio', dropped);
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        refusal = true;
        out.push(...openPart('refusal'), { type: 'delta', index: open!.index, delta: { type: 'refusal', text: delta.refusal } });
      }
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        const chatIndex = typeof call.index === 'number' ? call.index : indexFor(call.id);
        let state = calls.get(chatIndex);
        // A custom tool's own call streams as custom: {name, input} pieces (its type only on the first), as in openai-node's ChatCompletionStream.
        const freeform = call.custom ?? undefined;
        if (state === undefined) {
          out.push(...close());
          const name = String((freeform !== undefined ? freeform.name : call.function?.name) ?? '');
          const native = freeform !== undefined || call.type === 'custom';
          // A custom tool Relay sent as a function: its {"input": ...} arguments are unwrapped at its end.
          const wrapped = !native && custom.has(name);
          const id = String(call.id ?? '');
          state = { index: next++, chatIndex, id, buffer: wrapped ? '' : null };
          calls.set(chatIndex, state);
          freeChatIndex = Math.max(freeChatIndex, chatIndex + 1);
          out.push({ type: 'part_start', index: state.index, part: { type: 'tool_call', id, name, tool_kind: native || wrapped ? 'custom' : 'function' } });
        }
        lastCall = state;
        const args = toolArgumentsText(freeform !== undefined ? freeform.input : call.function?.arguments, dropped, TOOL_ARGUMENTS_NAME);
        if (args !== '') {
          if (state.buffer !== null) state.buffer += args;
          else out.push({ type: 'delta', index: state.index, delta: { type: 'arguments', text: args } });
        }
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      return out;
    },
    finish(): StreamEvent[] {
      if (ended) return [];
      if (finish !== null) return end();
      ended = true;
      return [...closeAll(), upstreamStreamError({ message: 'the upstream stream ended before it finished' })];
    },
  };
}
