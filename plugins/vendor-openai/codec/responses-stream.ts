// OpenAI Responses stream events -> canonical stream events.
//
// Output items map to canonical parts: each content part of a message item (output_text,
// refusal), each reasoning item (its summary parts joined by a blank line), each
// function_call and custom_tool_call. Encrypted reasoning that only arrives with
// output_item.done is carried as a `signature` delta of the reasoning part (the canonical
// stream has no other place for it; encoders read it back as encrypted content of an
// openai-origin part). A web_search_call item opens as one whole web_search_call part when it is
// done (its progress events carry nothing else); output_text annotations (url_citation) become
// citation deltas. Other server tool items are dropped.
import { emptyUsage, parseFrame, toolArgumentsText, type CanonicalRequest, type StreamEvent } from '../../../core/plugin-api/canonical.ts';
import { type Route, type StreamDecoder } from '../../../core/plugin-api.ts';
import { OPENAI_ORIGIN } from './responses-request.ts';
import { stopReasonFromResponse } from './responses-response.ts';
import { nameKind, TOOL_ARGUMENTS_NAME } from './answer-names.ts';
import { upstreamStreamError } from './stream-errors.ts';
import { usageOfResponse } from './usage.ts';
import { citationFromAnnotation, searchFromItem } from './web-search.ts';

interface Frame {
  type?: string;
  output_index?: number;
  content_index?: number;
  summary_index?: number;
  delta?: unknown;
  item?: { type?: string; id?: string; call_id?: string; name?: string; arguments?: unknown; input?: unknown; encrypted_content?: unknown; status?: unknown; action?: Record<string, unknown> };
  annotation?: unknown;
  part?: { type?: string };
  response?: { id?: string; model?: string; status?: string; incomplete_details?: { reason?: unknown } | null; usage?: unknown; output?: unknown; error?: unknown };
  code?: unknown;
  message?: unknown;
}

interface OpenPart { index: number; kind: 'text' | 'refusal' | 'reasoning' | 'tool'; sawDelta: boolean; encrypted?: string; text?: string }

export function responsesStreamDecoder(route: Route, request?: CanonicalRequest, dropped: string[] = []): StreamDecoder {
  // The text is kept for the cited text of url_citation annotations, which only a web search makes.
  const keepsText = request?.tools?.some((t) => t.type === 'web_search') === true;
  let started = false;
  let ended = false;
  let next = 0;
  let calledTools = false;
  let refused = false;
  const open = new Map<string, OpenPart>();

  const start = (response: Frame['response']): StreamEvent[] => {
    if (started) return [];
    started = true;
    return [{ type: 'start', id: typeof response?.id === 'string' ? response.id : '', model: typeof response?.model === 'string' ? response.model : route.upstreamModel }];
  };
  const openPart = (key: string, kind: OpenPart['kind'], part: Extract<StreamEvent, { type: 'part_start' }>['part']): StreamEvent[] => {
    if (open.has(key)) return [];
    const state: OpenPart = { index: next++, kind, sawDelta: false };
    if (part.type === 'reasoning' && part.encrypted !== undefined) state.encrypted = part.encrypted;
    open.set(key, state);
    return [{ type: 'part_start', index: state.index, part }];
  };
  const closePart = (key: string): StreamEvent[] => {
    const state = open.get(key);
    if (!state) return [];
    open.delete(key);
    return [{ type: 'part_end', index: state.index }];
  };
  const closeItem = (outputIndex: number): StreamEvent[] =>
    [...open.keys()].filter((k) => k === `o${outputIndex}` || k.startsWith(`o${outputIndex}c`)).flatMap(closePart);
  const closeAll = (): StreamEvent[] => [...open.keys()].flatMap(closePart);
  const delta = (key: string, d: Extract<StreamEvent, { type: 'delta' }>['delta']): StreamEvent[] => {
    const state = open.get(key);
    if (!state) return [];
    state.sawDelta = true;
    return [{ type: 'delta', index: state.index, delta: d }];
  };

  return {
    decode(_event: string | undefined, data: string): StreamEvent[] {
      if (ended) return [];
      const f = parseFrame<Frame>(data);
      if (f === null) return [];
      const item = `o${f.output_index ?? 0}`;
      const content = `${item}c${f.content_index ?? 0}`;
      const text = typeof f.delta === 'string' ? f.delta : '';
      switch (f.type) {
        case 'response.created':
        case 'response.in_progress':
        case 'response.queued':
          return start(f.response);
        case 'response.output_item.added': {
          const out = start(undefined);
          const it = f.item ?? {};
          if (it.type === 'reasoning') {
            out.push(...openPart(item, 'reasoning', {
              type: 'reasoning', origin: OPENAI_ORIGIN,
              ...(it.id === undefined ? {} : { id: it.id }),
              ...(typeof it.encrypted_content === 'string' ? { encrypted: it.encrypted_content } : {}),
            }));
          } else if (it.type === 'function_call' || it.type === 'custom_tool_call') {
            calledTools = true;
            out.push(...openPart(item, 'tool', {
              type: 'tool_call', id: it.call_id ?? '', name: it.name ?? '', tool_kind: it.type === 'custom_tool_call' ? 'custom' : 'function',
            }));
          } else if (it.type !== 'message' && it.type !== 'web_search_call') {
            nameKind(it.type, dropped); // server tools other than web search, and kinds Relay does not know
          }
          return out;
        }
        case 'response.content_part.added':
          if (f.part?.type === 'output_text') return openPart(content, 'text', { type: 'text' });
          if (f.part?.type === 'refusal') return openPart(content, 'refusal', { type: 'refusal' });
          // A reasoning item's text comes as reasoning_text deltas.
          if (f.part?.type !== 'reasoning_text') nameKind(f.part?.type, dropped);
          return [];
        case 'response.output_text.delta': {
          const out = [...openPart(content, 'text', { type: 'text' }), ...delta(content, { type: 'text', text })];
          const state = open.get(content);
          if (state && keepsText) state.text = (state.text ?? '') + text;
          return out;
        }
        case 'response.output_text.annotation.added': {
          const state = open.get(content);
          const citation = state ? citationFromAnnotation(f.annotation, state.text) : null;
          if (citation) return delta(content, { type: 'citation', citation });
          nameKind((f.annotation as { type?: unknown } | undefined)?.type, dropped);
          return [];
        }
        case 'response.refusal.delta':
          refused = true;
          return [...openPart(content, 'refusal', { type: 'refusal' }), ...delta(content, { type: 'refusal', text })];
        case 'response.content_part.done':
          return closePart(content);
        case 'response.reasoning_summary_part.added':
          return (f.summary_index ?? 0) > 0 && open.get(item)?.sawDelta ? delta(item, { type: 'reasoning', text: '\n\n' }) : [];
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          return text === '' ? [] : delta(item, { type: 'reasoning', text });
        case 'response.function_call_arguments.delta':
        case 'response.custom_tool_call_input.delta':
          return text === '' ? [] : delta(item, { type: 'arguments', text });
        case 'response.output_item.done': {
          const it = f.item ?? {};
          const state = open.get(item);
          const out: StreamEvent[] = [];
          if (state?.kind === 'reasoning' && typeof it.encrypted_content === 'string' && it.encrypted_content !== state.encrypted) {
            out.push({ type: 'delta', index: state.index, delta: { type: 'signature', signature: it.encrypted_content } });
          }
          if (it.type === 'web_search_call') {
            const index = next++;
            return [{ type: 'part_start', index, part: searchFromItem(it) }, { type: 'part_end', index }];
          }
          if (state?.kind === 'tool' && !state.sawDelta) {
            const args = toolArgumentsText(it.type === 'custom_tool_call' ? it.input : it.arguments, dropped, TOOL_ARGUMENTS_NAME);
            if (args !== '') out.push({ type: 'delta', index: state.index, delta: { type: 'arguments', text: args } });
          }
          return [...out, ...closeItem(f.output_index ?? 0)];
        }
        case 'response.completed':
        case 'response.incomplete': {
          ended = true;
          const response = f.response ?? {};
          return [...start(response), ...closeAll(), {
            type: 'end',
            stop_reason: stopReasonFromResponse(response, calledTools, refused),
            usage: usageOfResponse(response) ?? emptyUsage(),
          }];
        }
        case 'response.failed':
          ended = true;
          return [...closeAll(), upstreamStreamError(f.response?.error)];
        case 'error':
          ended = true;
          return [...closeAll(), upstreamStreamError(f)];
        default:
          return [];
      }
    },
    finish(): StreamEvent[] {
      if (ended) return [];
      ended = true;
      return [...closeAll(), upstreamStreamError({ message: 'the upstream stream ended before the response completed' })];
    },
  };
}
