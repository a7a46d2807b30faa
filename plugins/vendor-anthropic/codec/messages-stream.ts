// Anthropic Messages stream events -> canonical stream events.
//
// message_start -> start; content_block_start/delta/stop -> part_start/delta/part_end (blocks of
// server tools are skipped, so canonical indexes count only the parts kept); a web search's
// server_tool_use is held until its web_search_tool_result, and the two open as one whole
// web_search_call part (one left without a result, as at pause_turn, opens at the end, and one whose
// input the stream cut short opens before the stream's error: partial-query.ts); message_delta
// carries the stop reason and the cumulative usage; message_stop -> end; `error` -> error.
// A tool_use of a custom tool is buffered and, when it stops, emitted as the raw input text.
// A non-empty input at a block's start stands only if no input_json_delta follows (the SDK's reading).
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import { ERROR_CODES, type Route, type StreamDecoder } from '../../../core/plugin-api.ts';
import { emptyUsage, MessagesStreamUsage, type StopReason, type StreamEvent } from '../../../core/plugin-api/canonical.ts';
import { customToolNames, parseFrame, toolArgumentsText, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { codeForStreamErrorType } from './errors.ts';
import { ANTHROPIC_ORIGIN } from './messages-request.ts';
import { nameBlockType, stopReasonFromAnthropic, TOOL_INPUT_NAME } from './messages-response.ts';
import { plainTextDelta } from './text-delta.ts';
import { citationFromAnthropic, incompleteSearch, isWebSearchUse, searchFromUse, withResult } from './web-search.ts';
import { queryOfPartialInput } from './partial-query.ts';
import type { WebSearchCallPart } from '../../../core/plugin-api/canonical.ts';

interface Frame {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: unknown };
  content_block?: { type?: string; id?: string; name?: string; input?: unknown; data?: unknown; tool_use_id?: string; content?: unknown };
  delta?: { type?: string; text?: unknown; partial_json?: unknown; thinking?: unknown; signature?: unknown; stop_reason?: unknown; stop_sequence?: unknown; citation?: unknown };
  usage?: unknown;
  error?: { type?: unknown; message?: unknown };
}

interface Block {
  index: number;
  kind: 'text' | 'tool' | 'reasoning';
  customBuffer: string | null;
  /** A function call's arguments were sent (at least one non-empty piece). */
  sentArguments: boolean;
  /** A non-empty input given at content_block_start: it stands only if no input_json_delta follows. */
  heldInput: string | null;
}

export function messagesStreamDecoder(route: Route, request?: CanonicalRequest, dropped: string[] = []): StreamDecoder {
  const custom = customToolNames(request);
  const usage = new MessagesStreamUsage();
  const blocks = new Map<number, Block>();
  /** Web searches whose server_tool_use block is open, by Anthropic index: its input JSON so far (null before any delta). */
  const searchInputs = new Map<number, { use: Record<string, unknown>; json: string | null }>();
  /** Web searches waiting for their result, by server_tool_use id. */
  const searches = new Map<string, WebSearchCallPart>();
  let started = false;
  let ended = false;
  /** Whether any content block came: a refusal before one is not billed. */
  let sawBlock = false;
  let next = 0;
  let stopReason: StopReason = 'end_turn';
  let stopSequence: string | undefined;

  const start = (message?: Frame['message']): StreamEvent[] => {
    if (started) return [];
    started = true;
    return [{ type: 'start', id: typeof message?.id === 'string' ? message.id : '', model: typeof message?.model === 'string' ? message.model : route.upstreamModel }];
  };
  const stop = (anthropicIndex: number): StreamEvent[] => {
    const block = blocks.get(anthropicIndex);
    if (!block) return [];
    blocks.delete(anthropicIndex);
    const out: StreamEvent[] = [];
    if (block.heldInput !== null) {
      if (block.customBuffer !== null) block.customBuffer = block.heldInput;
      else {
        block.sentArguments = true;
        out.push({ type: 'delta', index: block.index, delta: { type: 'arguments', text: block.heldInput } });
      }
    }
    // A call with no arguments streams `input: {}` and at most an empty partial_json: its
    // arguments are "{}", as in the non-streamed answer (JSON.parse("") fails in every client).
    if (block.kind === 'tool' && block.customBuffer === null && !block.sentArguments) {
      out.push({ type: 'delta', index: block.index, delta: { type: 'arguments', text: '{}' } });
    }
    if (block.customBuffer !== null) {
      let input: unknown = {};
      try {
        input = JSON.parse(block.customBuffer === '' ? '{}' : block.customBuffer);
      } catch {
        input = { input: block.customBuffer };
      }
      const text = unwrapCustomInput(input);
      if (text !== '') out.push({ type: 'delta', index: block.index, delta: { type: 'arguments', text } });
    }
    out.push({ type: 'part_end', index: block.index });
    return out;
  };
  const openSearch = (part: WebSearchCallPart): StreamEvent[] => {
    const index = next++;
    return [{ type: 'part_start', index, part }, { type: 'part_end', index }];
  };
  /** A search's server_tool_use closed: `cut` when the stream ended or failed before its content_block_stop. */
  const closeSearchInput = (anthropicIndex: number, cut: boolean): void => {
    const open = searchInputs.get(anthropicIndex);
    if (!open) return;
    searchInputs.delete(anthropicIndex);
    const input = searchInput(open);
    // Without its query (cut before it, or broken JSON) the search is incomplete, never an empty one.
    const known = input !== null && (!cut || typeof input.query === 'string');
    const part = known ? searchFromUse({ ...open.use, input }) : incompleteSearch(open.use);
    searches.set(part.id, part);
  };
  /** Searches that never got a result (the turn paused, or the stream broke off): opened as they are. */
  const unanswered = (): StreamEvent[] => {
    for (const index of [...searchInputs.keys()]) closeSearchInput(index, true);
    const out = [...searches.values()].flatMap(openSearch);
    searches.clear();
    return out;
  };
  const closeAll = (): StreamEvent[] => [...blocks.keys()].flatMap(stop);
  const textDelta = (anthropicIndex: number, text: string): StreamEvent[] => {
    const block = blocks.get(anthropicIndex);
    return block && text !== '' ? [{ type: 'delta', index: block.index, delta: { type: 'text', text } }] : [];
  };
  const end = (): StreamEvent[] => {
    ended = true;
    const event: StreamEvent = { type: 'end', stop_reason: stopReason, usage: usage.value() ?? emptyUsage() };
    if (stopSequence !== undefined) event.stop_sequence = stopSequence;
    return [...start(), ...closeAll(), ...unanswered(), event];
  };

  return {
    decode(_event: string | undefined, data: string): StreamEvent[] {
      if (ended) return [];
      const plain = plainTextDelta(data);
      if (plain !== null) return textDelta(plain.index, plain.text);
      const f = parseFrame<Frame>(data);
      if (f === null) return [];
      const at = f.index ?? 0;
      switch (f.type) {
        case 'message_start':
          usage.start(f.message);
          return start(f.message);
        case 'content_block_start': {
          sawBlock = true;
          const out = start();
          const b = f.content_block ?? {};
          const index = next;
          if (b.type === 'text') {
            blocks.set(at, { index, kind: 'text', customBuffer: null, sentArguments: false, heldInput: null });
            out.push({ type: 'part_start', index, part: { type: 'text' } });
          } else if (b.type === 'tool_use') {
            const name = b.name ?? '';
            const isCustom = custom.has(name);
            // Anthropic opens a call with input {} and streams its JSON after it; another start input is held
            // until the block stops, and replaced by the deltas if any come (as Anthropic's SDK reads it).
            const given = toolArgumentsText(b.input, dropped, TOOL_INPUT_NAME);
            const held = given === '{}' || given === '' ? null : given;
            blocks.set(at, { index, kind: 'tool', customBuffer: isCustom ? '' : null, sentArguments: false, heldInput: held });
            out.push({ type: 'part_start', index, part: { type: 'tool_call', id: b.id ?? '', name, tool_kind: isCustom ? 'custom' : 'function' } });
          } else if (b.type === 'thinking') {
            blocks.set(at, { index, kind: 'reasoning', customBuffer: null, sentArguments: false, heldInput: null });
            out.push({ type: 'part_start', index, part: { type: 'reasoning', origin: ANTHROPIC_ORIGIN } });
          } else if (b.type === 'redacted_thinking') {
            blocks.set(at, { index, kind: 'reasoning', customBuffer: null, sentArguments: false, heldInput: null });
            out.push({ type: 'part_start', index, part: { type: 'reasoning', origin: ANTHROPIC_ORIGIN, ...(typeof b.data === 'string' ? { encrypted: b.data } : {}) } });
          } else if (isWebSearchUse(b)) {
            searchInputs.set(at, { use: b as Record<string, unknown>, json: null });
            return out;
          } else if (b.type === 'web_search_tool_result' && searches.has(b.tool_use_id ?? '')) {
            const use = searches.get(b.tool_use_id ?? '')!;
            searches.delete(use.id);
            return [...out, ...openSearch(withResult(use, b as Record<string, unknown>))];
          } else {
            nameBlockType(b.type, dropped); // other server tool blocks, and kinds Relay does not know
            return out;
          }
          next += 1;
          return out;
        }
        case 'content_block_delta': {
          const block = blocks.get(at);
          const d = f.delta ?? {};
          const search = searchInputs.get(at);
          if (search && d.type === 'input_json_delta') search.json = (search.json ?? '') + (typeof d.partial_json === 'string' ? d.partial_json : '');
          if (!block) return [];
          if (d.type === 'text_delta' && typeof d.text === 'string') return textDelta(at, d.text);
          if (d.type === 'input_json_delta') {
            block.heldInput = null; // the SDK's input is then the parse of the deltas alone ('' is {})
            // A piece that is not text is read as Bedrock's and OpenAI's are: an object as its JSON, 42 named.
            const piece = toolArgumentsText(d.partial_json, dropped, TOOL_INPUT_NAME);
            if (piece === '') return [];
            if (block.customBuffer !== null) {
              block.customBuffer += piece;
              return [];
            }
            block.sentArguments = true;
            return [{ type: 'delta', index: block.index, delta: { type: 'arguments', text: piece } }];
          }
          if (d.type === 'thinking_delta' && typeof d.thinking === 'string' && d.thinking !== '') return [{ type: 'delta', index: block.index, delta: { type: 'reasoning', text: d.thinking } }];
          if (d.type === 'signature_delta' && typeof d.signature === 'string' && d.signature !== '') return [{ type: 'delta', index: block.index, delta: { type: 'signature', signature: d.signature } }];
          if (d.type === 'citations_delta' && block.kind === 'text') {
            const citation = citationFromAnthropic(d.citation);
            if (citation) return [{ type: 'delta', index: block.index, delta: { type: 'citation', citation } }];
            nameBlockType('citations', dropped); // a place in one of the request's documents
            return [];
          }
          return [];
        }
        case 'content_block_stop':
          closeSearchInput(at, false);
          return stop(at);
        case 'message_delta':
          usage.merge(f.usage);
          if (f.delta?.stop_reason === 'refusal' && !sawBlock) usage.refusedEarly();
          if (f.delta?.stop_reason !== undefined && f.delta.stop_reason !== null) stopReason = stopReasonFromAnthropic(f.delta.stop_reason);
          if (typeof f.delta?.stop_sequence === 'string') stopSequence = f.delta.stop_sequence;
          return [];
        case 'message_stop':
          return end();
        case 'error': {
          ended = true;
          const code = codeForStreamErrorType(f.error?.type);
          const def = ERROR_CODES[code];
          return [...closeAll(), ...unanswered(), {
            type: 'error',
            error: { type: def.type, code, status: def.status, message: typeof f.error?.message === 'string' ? f.error.message : 'the upstream reported an error' },
          }];
        }
        default:
          return []; // ping and unknown events
      }
    },
    usage: () => usage.value(),
    finish(): StreamEvent[] {
      if (ended) return [];
      ended = true;
      const def = ERROR_CODES.RELAY_ERR_UPSTREAM_BAD_RESPONSE;
      return [...closeAll(), ...unanswered(), {
        type: 'error',
        error: { type: def.type, code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', status: def.status, message: 'the upstream stream ended before the message completed' },
      }];
    },
  };
}

/**
 * A search's input: the start's when no input_json_delta came (as for tool_use), else the deltas'
 * JSON; cut short, its query if that string is whole; null when not even that is known.
 */
function searchInput(open: { use: Record<string, unknown>; json: string | null }): Record<string, unknown> | null {
  if (open.json === null) return asObject(open.use.input ?? {});
  try {
    return asObject(open.json === '' ? {} : JSON.parse(open.json));
  } catch {
    const query = queryOfPartialInput(open.json);
    return query === undefined ? null : { query };
  }
}

function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null;
}
