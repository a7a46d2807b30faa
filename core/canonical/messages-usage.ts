// The Messages shape's usage object <-> canonical usage, and the passthrough tap of a Messages
// stream. One copy for every adapter whose upstream answers in the Messages shape (Anthropic, Claude
// on Bedrock and on Vertex) and for the inbound codec that writes it: a bill that reads 1-hour cache
// writes or web searches through one vendor reads them through all.
import type { StreamInspector } from '../hooks.ts';
import { setAnswerModel, type Usage } from './types.ts';
import { tokenCount } from './token-count.ts';


/** The members of a Messages `usage` object that Relay reads. */
export interface MessagesUsageObject {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  /** The writes split by cache lifetime: 1-hour writes cost more than 5-minute ones. */
  cache_creation?: { ephemeral_5m_input_tokens?: unknown; ephemeral_1h_input_tokens?: unknown } | null;
  output_tokens_details?: { thinking_tokens?: unknown } | null;
  /** Server tools run for the answer: web searches are billed per search. */
  server_tool_use?: { web_search_requests?: unknown } | null;
  /** "fast" when fast mode served the answer, at a multiple of the model's rates. */
  speed?: unknown;
  /** "us" when the answer ran on US-only inference, at a multiple of the model's rates. */
  inference_geo?: unknown;
}

/** The conditions this answer was priced under (see Usage.price_modifiers). */
function priceModifiers(u: MessagesUsageObject): string[] {
  const out: string[] = [];
  if (u.speed === 'fast') out.push('fast');
  if (u.inference_geo === 'us') out.push('us_inference');
  return out;
}

/** Messages usage -> canonical. The shape's input_tokens leaves out cache reads and writes; canonical input counts every prompt token. */
export function usageFromMessages(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as MessagesUsageObject;
  const cacheRead = tokenCount(u.cache_read_input_tokens);
  const cacheWrite = tokenCount(u.cache_creation_input_tokens);
  const write1h = Math.min(tokenCount(u.cache_creation?.ephemeral_1h_input_tokens), cacheWrite);
  const searches = tokenCount(u.server_tool_use?.web_search_requests);
  const modifiers = priceModifiers(u);
  return {
    input_tokens: tokenCount(tokenCount(u.input_tokens) + cacheRead + cacheWrite),
    output_tokens: tokenCount(u.output_tokens),
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    ...(write1h > 0 ? { cache_write_1h_tokens: write1h } : {}),
    reasoning_tokens: tokenCount(u.output_tokens_details?.thinking_tokens),
    ...(searches > 0 ? { web_search_requests: searches } : {}),
    ...(modifiers.length > 0 ? { price_modifiers: modifiers } : {}),
  };
}

/** The members of a whole Messages answer that price it, beside its usage. */
export interface MessagesAnswer {
  usage?: unknown;
  model?: unknown;
  stop_reason?: unknown;
  content?: unknown;
}

/**
 * A whole answer's usage, with what else its price depends on: the model that served it (Anthropic's
 * server-side `fallbacks` re-serve a refused request on another model, billed at that model's
 * rates) and whether it is billed at all (a refusal before any output is not).
 */
export function usageOfMessagesAnswer(answer: MessagesAnswer | null | undefined): Usage | null {
  const usage = setAnswerModel(usageFromMessages(answer?.usage), answer?.model);
  if (usage !== null && answer?.stop_reason === 'refusal' && Array.isArray(answer.content) && answer.content.length === 0) usage.unbilled = 'refusal';
  return usage;
}

/** Canonical usage -> the Messages shape's, with the 1-hour writes and searches a client's own accounting reads. */
export function usageToMessages(usage: Usage): Record<string, unknown> {
  const write1h = Math.min(usage.cache_write_1h_tokens ?? 0, usage.cache_write_tokens);
  const searches = usage.web_search_requests ?? 0;
  return {
    input_tokens: Math.max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens),
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_write_tokens,
    cache_read_input_tokens: usage.cache_read_tokens,
    ...(write1h > 0 ? { cache_creation: { ephemeral_5m_input_tokens: usage.cache_write_tokens - write1h, ephemeral_1h_input_tokens: write1h } } : {}),
    ...(usage.reasoning_tokens > 0 ? { output_tokens_details: { thinking_tokens: usage.reasoning_tokens } } : {}),
    ...(searches > 0 ? { server_tool_use: { web_search_requests: searches } } : {}),
  };
}

/**
 * A stream's usage: message_start's counts, overwritten member by member by the cumulative counts
 * message_delta carries; with the model message_start names and whether the answer was refused
 * before any output (not billed).
 */
export class MessagesStreamUsage {
  private readonly fields: Record<string, unknown> = {};
  private model: unknown;
  private refusedBeforeOutput = false;

  /** message_start's message: its usage, and the model serving the answer. */
  start(message: { usage?: unknown; model?: unknown } | null | undefined): void {
    if (message?.model !== undefined) this.model = message.model;
    this.merge(message?.usage);
  }

  /** A stop_reason "refusal" before any content block. */
  refusedEarly(): void {
    this.refusedBeforeOutput = true;
  }

  merge(raw: unknown): void {
    if (raw === null || typeof raw !== 'object') return;
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      if (value !== null && value !== undefined) this.fields[key] = value;
    }
  }

  value(): Usage | null {
    const usage = setAnswerModel(Object.keys(this.fields).length > 0 ? usageFromMessages(this.fields) : null, this.model);
    if (usage !== null && this.refusedBeforeOutput) usage.unbilled = 'refusal';
    return usage;
  }
}

// Named frames that carry output and no usage: classified by their name, without JSON.parse.
const OUTPUT_WITHOUT_USAGE: ReadonlySet<string> = new Set(['content_block_delta', 'content_block_start', 'content_block_stop', 'message_stop']);

/**
 * Classifies a Messages stream's frames for the passthrough tap and reads their usage: message_start
 * and ping are `opening`, `error` is `error`, a message_delta with stop_reason "refusal" before any
 * content block is `content_filter`, everything else carries output.
 */
export function messagesStreamInspector(): StreamInspector {
  const usage = new MessagesStreamUsage();
  let sawOutput = false;
  return {
    inspect(event, data) {
      if (event !== undefined && OUTPUT_WITHOUT_USAGE.has(event)) {
        sawOutput = true;
        return 'output';
      }
      if (event === 'ping') return 'opening';
      let type = event;
      let refused = false;
      try {
        const frame = JSON.parse(data) as { type?: unknown; message?: { usage?: unknown; model?: unknown }; usage?: unknown; delta?: { stop_reason?: unknown } };
        if (typeof frame?.type === 'string') type = frame.type;
        if (type === 'message_start') usage.start(frame.message);
        if (type === 'message_delta') {
          usage.merge(frame.usage);
          refused = frame.delta?.stop_reason === 'refusal';
          if (refused && !sawOutput) usage.refusedEarly();
        }
      } catch {
        // keep the SSE event name
      }
      if (type === 'message_start' || type === 'ping') return 'opening';
      if (type === 'error') return 'error';
      if (refused && !sawOutput) return 'content_filter';
      sawOutput = true;
      return 'output';
    },
    usage: () => usage.value(),
  };
}
