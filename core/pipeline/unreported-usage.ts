// An answer that began and ended without the upstream reporting its usage: the client cut it (Codex
// and Claude Code users interrupt turns; OpenAI's streams report usage in their last event), the
// upstream broke it, or the upstream sends none (an OpenAI-compatible server that ignores
// stream_options). The vendor still bills the prompt and the output it generated, and a refusing
// budget that counted such answers as 0 could be overspent without limit. So the record gets:
// - input: the vendor's count of the prompt as it was sent, when its adapter has a count endpoint
//   (VendorAdapter.countTokens), the host has not lately answered it as missing (missing-counters.ts),
//   and it answers in time (extras.usage_counted: "input"); else Relay's estimate of the prompt
//   (input-token-estimate.ts);
// - output: an estimate of what Relay saw of the answer before it ended (output-token-estimate.ts);
// and extras.usage_estimated names the parts that are estimates ("input", "output", "input,output").
// An answer cut or broken after the upstream reported part of its usage (Anthropic reports the prompt
// and one output token at the start, the output at the end) keeps what was reported, with the output
// raised to the estimate of what Relay saw when that is more (extras.usage_estimated: "output").
// A stream the upstream broke is counted too: the vendor read the prompt and generated the output
// Relay forwarded, whether it bills its own failure is not known, and a budget must err on the side
// of counting (the record's error_code tells such answers apart).
// An answer whose usage names a count Relay cannot read is metered the same way, for that part: a
// prompt of 0 tokens, an output of 0 tokens beside output Relay saw (a count sent as a string, a
// negative, null or missing one reads as 0), or a count at MAX_TOKEN_COUNT (1e20 is clamped there:
// no request used two billion tokens). extras.usage_unreadable names those parts.
import { emptyUsage, MAX_TOKEN_COUNT, type CanonicalRequest, type Usage } from '../canonical/types.ts';
import { estimateInputTokens } from '../canonical/input-token-estimate.ts';
import { estimateOutputTokens } from '../canonical/output-token-estimate.ts';
import { COUNTING_SHAPES } from '../canonical/counting-shapes.ts';
import type { UpstreamRequest } from '../hooks.ts';
import type { RequestRecord } from './request-record.ts';
import type { MissingCounters } from './missing-counters.ts';

/** The count is worth this much of the finished request's time at most. */
export const CUT_COUNT_TIMEOUT_MS = 5_000;

/** Whether a usage reports nothing: a decoder that closes a stream without usage ends it with zeros. */
function reportsNothing(usage: Usage): boolean {
  return usage.input_tokens === 0 && usage.output_tokens === 0 && usage.cache_read_tokens === 0 && usage.cache_write_tokens === 0;
}

/** The parts of an answer's usage Relay meters itself: both when none was reported, else those it could not read. */
export type UnreportedPart = 'input' | 'output';

/** Whether the record's answer began (a 2xx or 3xx from a route) and the upstream reported no usage for it. */
export function answeredWithoutUsage(record: RequestRecord): boolean {
  if (record.route === null || record.status < 200 || record.status >= 400) return false;
  // A token count is answered with a count, not a generation: nothing to bill.
  if (COUNTING_SHAPES.includes(record.inboundShape)) return false;
  return record.usage === null || reportsNothing(record.usage);
}

/**
 * The parts of a begun answer's usage that the upstream reported in no form Relay can read (see
 * the top of this file); empty when it reported none at all (answeredWithoutUsage) or all read.
 */
export function unreadableParts(record: RequestRecord): UnreportedPart[] {
  const usage = record.usage;
  if (usage === null || answeredWithoutUsage(record) || record.route === null || record.status < 200 || record.status >= 400 || COUNTING_SHAPES.includes(record.inboundShape)) return [];
  const parts: UnreportedPart[] = [];
  if (usage.input_tokens === 0 || usage.input_tokens >= MAX_TOKEN_COUNT) parts.push('input');
  // Read only for an output of 0: an answer's characters are not worked out on the usual path.
  if (usage.output_tokens >= MAX_TOKEN_COUNT || (usage.output_tokens === 0 && (record.generatedChars?.() ?? 0) > 0)) parts.push('output');
  return parts;
}

/** Whether the answer ended early (the client cut it, the upstream broke it) with usage reported before its end. */
export function endedEarlyWithUsage(record: RequestRecord): boolean {
  if (record.route === null || record.usage === null || record.status < 200 || record.status >= 400) return false;
  return record.clientAborted || record.errorCode === 'upstream_stream_error';
}

/** Raises the reported output to the estimate of what Relay saw of the answer, when that is more. */
export function raiseOutputToSeen(record: RequestRecord): void {
  const output = estimateOutputTokens(record.generatedChars?.() ?? 0);
  if (record.usage === null || output <= record.usage.output_tokens) return;
  record.usage = { ...record.usage, output_tokens: output };
  record.extras.usage_estimated = 'output';
}

/**
 * Gives an answer without usage the prompt's count by the vendor, else Relay's estimates (see the top
 * of this file); with `unreadable`, only those parts of a usage the upstream reported, the rest kept.
 * `resend` makes the request as it was sent (its body is not kept meanwhile); `prompt`, the same in
 * canonical form, for a counter that takes another shape and for the estimate.
 */
export async function meterUnreported(record: RequestRecord, counters: MissingCounters, resend: () => UpstreamRequest, prompt?: () => CanonicalRequest, unreadable?: readonly UnreportedPart[]): Promise<void> {
  const parts = unreadable ?? ['input', 'output'];
  const base = record.usage ?? emptyUsage();
  const estimated: string[] = [];
  let counted: number | null = null;
  let input = base.input_tokens;
  if (parts.includes('input')) {
    counted = await vendorCount(record, counters, resend, prompt);
    const estimate = counted === null ? promptEstimate(prompt) : null;
    if (estimate !== null) estimated.push('input');
    // A count at the bound that neither counter nor estimate replaces is no count at all.
    input = counted ?? estimate ?? (unreadable ? 0 : base.input_tokens);
  }
  let output = base.output_tokens;
  if (parts.includes('output')) {
    output = estimateOutputTokens(record.generatedChars?.() ?? 0);
    if (output > 0) estimated.push('output');
  }
  if (unreadable) record.extras.usage_unreadable = unreadable.join(',');
  else if (input === 0 && output === 0 && counted === null && estimated.length === 0) return;
  // Parts of the input (cache reads and writes) and output (reasoning) stay as reported, within the new totals.
  record.usage = {
    ...base, input_tokens: input, output_tokens: output,
    cache_read_tokens: Math.min(base.cache_read_tokens, input), cache_write_tokens: Math.min(base.cache_write_tokens, input), reasoning_tokens: Math.min(base.reasoning_tokens, output),
  };
  if (counted !== null) record.extras.usage_counted = 'input';
  if (estimated.length > 0) record.extras.usage_estimated = estimated.join(',');
}

/** The prompt's count by the route's vendor, or null when it has no counter or it did not answer in time. */
async function vendorCount(record: RequestRecord, counters: MissingCounters, resend: () => UpstreamRequest, prompt?: () => CanonicalRequest): Promise<number | null> {
  const route = record.route;
  const adapter = route?.adapter;
  if (!route || !adapter?.countTokens || counters.missing(route)) return null;
  let counted: number | null;
  try {
    // The request's own signal fired when the client left: the count gets its own deadline.
    counted = await adapter.countTokens(counters.watched({ ...resend(), signal: AbortSignal.timeout(CUT_COUNT_TIMEOUT_MS) }), prompt);
  } catch {
    return null;
  }
  return counted !== null && Number.isInteger(counted) && counted >= 0 ? counted : null;
}

/** Relay's estimate of the prompt, or null when the request has no canonical form (a shape no codec reads). */
function promptEstimate(prompt?: () => CanonicalRequest): number | null {
  if (!prompt) return null;
  try {
    return estimateInputTokens(prompt());
  } catch {
    return null; // a body the codec does not read: nothing to estimate from
  }
}
