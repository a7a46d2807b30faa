// The logs list as CSV, for a spreadsheet: the rows loaded on the page (filters applied), one
// line each, with the names the page shows beside the ids.
import type { UsageEvent } from '../api/types.ts';

const COLUMNS = [
  'started_at', 'request_id', 'status', 'error_code', 'model', 'relay_key', 'relay_key_prefix', 'client', 'stream',
  'input_tokens', 'output_tokens', 'cache_read_tokens', 'reasoning_tokens', 'cost', 'currency', 'latency_ms', 'ttfb_ms',
] as const;

/** RFC 4180: quoted when it holds a comma, quote or line break. A leading =, +, - or @ is prefixed with ' so a spreadsheet does not run it as a formula. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function logsCsv(events: UsageEvent[], keyName: (id: string | null) => string): string {
  const rows = events.map((e) => {
    const cells: Record<(typeof COLUMNS)[number], unknown> = {
      started_at: e.started_at, request_id: e.request_id, status: e.status, error_code: e.error_code,
      model: e.model_slug ?? e.model_requested, relay_key: e.relay_key_id ? keyName(e.relay_key_id) : null, relay_key_prefix: e.relay_key_prefix,
      client: e.client, stream: e.stream, input_tokens: e.input_tokens, output_tokens: e.output_tokens,
      cache_read_tokens: e.cache_read_tokens, reasoning_tokens: e.reasoning_tokens, cost: e.cost, currency: e.currency,
      latency_ms: e.latency_ms, ttfb_ms: e.ttfb_ms,
    };
    return COLUMNS.map((c) => csvField(cells[c])).join(',');
  });
  return `${[COLUMNS.join(','), ...rows].join('\r\n')}\r\n`;
}
