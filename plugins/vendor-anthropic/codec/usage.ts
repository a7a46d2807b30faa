// Anthropic usage -> canonical usage. Anthropic's input_tokens excludes cache reads and writes;
// the canonical input_tokens counts every prompt token, so they are summed.
import type { Usage } from '../../../core/plugin-api/canonical.ts';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

export interface AnthropicUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  /** The writes split by cache lifetime: 1-hour writes cost more than 5-minute ones. */
  cache_creation?: { ephemeral_5m_input_tokens?: unknown; ephemeral_1h_input_tokens?: unknown } | null;
  output_tokens_details?: { thinking_tokens?: unknown } | null;
  /** Server tools run for the answer: web searches are billed per search. */
  server_tool_use?: { web_search_requests?: unknown } | null;
}

export function usageFromAnthropic(raw: unknown): Usage | null {
  if (raw === null || typeof raw !== 'object') return null;
  const u = raw as AnthropicUsage;
  const cacheRead = count(u.cache_read_input_tokens);
  const cacheWrite = count(u.cache_creation_input_tokens);
  const write1h = Math.min(count(u.cache_creation?.ephemeral_1h_input_tokens), cacheWrite);
  const searches = count(u.server_tool_use?.web_search_requests);
  return {
    input_tokens: count(u.input_tokens) + cacheRead + cacheWrite,
    output_tokens: count(u.output_tokens),
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    ...(write1h > 0 ? { cache_write_1h_tokens: write1h } : {}),
    reasoning_tokens: count(u.output_tokens_details?.thinking_tokens),
    ...(searches > 0 ? { web_search_requests: searches } : {}),
  };
}

/** Stream usage: message_start's counts, overwritten by the cumulative counts message_delta carries. */
export class StreamUsage {
  private readonly fields: AnthropicUsage = {};

  merge(raw: unknown): void {
    if (raw === null || typeof raw !== 'object') return;
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      if (value !== null && value !== undefined) (this.fields as Record<string, unknown>)[key] = value;
    }
  }

  get seen(): boolean {
    return Object.keys(this.fields).length > 0;
  }

  value(): Usage | null {
    return this.seen ? usageFromAnthropic(this.fields) : null;
  }
}
