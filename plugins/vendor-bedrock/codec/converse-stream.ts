// ConverseStream events (as the SSE frames the adapter makes of the binary event stream: the
// event's name, its JSON payload) -> canonical stream events.
//   messageStart -> start; contentBlockStart (tool use) -> part_start; contentBlockDelta ->
//   delta, opening a text or reasoning part first when the block had no start (Converse sends
//   none for them); contentBlockStop -> part_end; messageStop holds the stop reason; metadata
//   (the last event, with usage) -> end. `exception` is an in-stream error. Block kinds no
//   stream event carries (an image, a citation, ...) are named in `dropped`, once each.
// Custom tools' input is buffered and sent unwrapped when their block stops.
import { ERROR_CODES, type ErrorCode, type Route, type StreamDecoder } from '../../../core/plugin-api.ts';
import { customToolNames, emptyUsage, parseFrame, toolArgumentsText, unwrapCustomInput, type CanonicalRequest, type StopReason, type StreamEvent, type Usage } from '../../../core/plugin-api/canonical.ts';
import { nameBlock, nameDropped, TOOL_INPUT_NAME } from './answer-parts.ts';
import { BEDROCK_ORIGIN } from './converse-request.ts';
import { newResponseId } from './converse-response.ts';
import { codeForStreamException, exceptionName } from './errors.ts';
import { stopReasonFromConverse, stopSequenceOf } from './stop-reason.ts';
import { usageFromConverse } from './usage.ts';
import type { ConverseStreamPayload } from './wire.ts';

interface OpenBlock {
  index: number;
  kind: 'text' | 'reasoning' | 'tool_call';
  /** Custom tool input, sent unwrapped at the block's stop; null for other blocks. */
  customBuffer: string | null;
}

export function converseStreamDecoder(route: Route, request?: CanonicalRequest, dropped: string[] = []): StreamDecoder {
  const custom = customToolNames(request);
  const blocks = new Map<number, OpenBlock>();
  let next = 0;
  let started = false;
  let ended = false;
  let stopReason: StopReason | undefined;
  let stopSequence: string | undefined;
  let usage: Usage | null = null;

  const start = (): StreamEvent[] => {
    if (started) return [];
    started = true;
    return [{ type: 'start', id: newResponseId(), model: route.upstreamModel }];
  };
  const open = (at: number, kind: OpenBlock['kind'], part: Extract<StreamEvent, { type: 'part_start' }>['part'], customBuffer: string | null = null): StreamEvent[] => {
    const index = next++;
    blocks.set(at, { index, kind, customBuffer });
    return [{ type: 'part_start', index, part }];
  };
  const stop = (at: number): StreamEvent[] => {
    const block = blocks.get(at);
    if (!block) return [];
    blocks.delete(at);
    const out: StreamEvent[] = [];
    if (block.customBuffer !== null) {
      const raw = unwrapCustomInput(safeJson(block.customBuffer));
      if (raw !== '') out.push({ type: 'delta', index: block.index, delta: { type: 'arguments', text: raw } });
    }
    out.push({ type: 'part_end', index: block.index });
    return out;
  };
  const closeAll = (): StreamEvent[] => [...blocks.keys()].flatMap(stop);
  const end = (): StreamEvent[] => {
    ended = true;
    const event: StreamEvent = { type: 'end', stop_reason: stopReason ?? 'end_turn', usage: usage ?? emptyUsage() };
    if (stopSequence !== undefined) event.stop_sequence = stopSequence;
    return [...start(), ...closeAll(), event];
  };
  const failure = (code: ErrorCode, message: string): StreamEvent[] => {
    ended = true;
    const def = ERROR_CODES[code];
    return [...start(), ...closeAll(), { type: 'error', error: { type: def.type, code, status: def.status, message } }];
  };

  const delta = (p: ConverseStreamPayload): StreamEvent[] => {
    const at = p.contentBlockIndex ?? 0;
    const d = p.delta ?? {};
    const out: StreamEvent[] = [];
    let block = blocks.get(at);
    if (typeof d.text === 'string') {
      if (!block) out.push(...open(at, 'text', { type: 'text' }));
      block = blocks.get(at)!;
      if (d.text !== '') out.push({ type: 'delta', index: block.index, delta: { type: 'text', text: d.text } });
      return out;
    }
    if (d.toolUse) {
      if (!block) return [];
      const text = toolArgumentsText(d.toolUse.input, dropped, TOOL_INPUT_NAME);
      if (block.customBuffer !== null) block.customBuffer += text;
      else if (text !== '') out.push({ type: 'delta', index: block.index, delta: { type: 'arguments', text } });
      return out;
    }
    const r = d.reasoningContent;
    if (r) {
      if (!block) {
        out.push(...open(at, 'reasoning', typeof r.redactedContent === 'string'
          ? { type: 'reasoning', origin: BEDROCK_ORIGIN, encrypted: r.redactedContent }
          : { type: 'reasoning', origin: BEDROCK_ORIGIN }));
        block = blocks.get(at)!;
      }
      if (typeof r.text === 'string' && r.text !== '') out.push({ type: 'delta', index: block.index, delta: { type: 'reasoning', text: r.text } });
      if (typeof r.signature === 'string' && r.signature !== '') out.push({ type: 'delta', index: block.index, delta: { type: 'signature', signature: r.signature } });
      return out;
    }
    // A citation delta points into the request's documents (the answer's `citations`).
    for (const kind of Object.keys(d)) nameDropped(dropped, kind === 'citation' ? 'citations' : kind);
    return out;
  };

  return {
    decode(event: string | undefined, data: string): StreamEvent[] {
      if (ended) return [];
      const p = parseFrame<ConverseStreamPayload>(data);
      if (p === null) return [];
      switch (event) {
        case 'messageStart':
          return start();
        case 'contentBlockStart': {
          const tool = p.start?.toolUse;
          if (!tool) {
            nameBlock(p.start ?? {}, dropped);
            return start();
          }
          const name = String(tool.name ?? '');
          const kind = custom.has(name) ? 'custom' : 'function';
          return [...start(), ...open(p.contentBlockIndex ?? 0, 'tool_call', { type: 'tool_call', id: String(tool.toolUseId ?? ''), name, tool_kind: kind }, kind === 'custom' ? '' : null)];
        }
        case 'contentBlockDelta':
          return [...start(), ...delta(p)];
        case 'contentBlockStop':
          return stop(p.contentBlockIndex ?? 0);
        case 'messageStop':
          stopReason = stopReasonFromConverse(p.stopReason);
          stopSequence = stopSequenceOf(p.additionalModelResponseFields);
          return closeAll();
        case 'metadata':
          usage = usageFromConverse(p.usage);
          return stopReason === undefined ? [] : end();
        case 'exception': {
          const name = exceptionName(p.exception);
          return failure(codeForStreamException(name), typeof p.message === 'string' && p.message !== '' ? p.message : `the upstream reported ${p.exception ?? 'an error'}`);
        }
        default:
          return [];
      }
    },
    finish(): StreamEvent[] {
      if (ended) return [];
      // messageStop came but no metadata: the answer is whole, only its usage is missing.
      if (stopReason !== undefined) return end();
      return failure('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream stream ended before the message completed');
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text === '' ? '{}' : text);
  } catch {
    return { input: text };
  }
}
