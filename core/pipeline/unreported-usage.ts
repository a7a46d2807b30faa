// An answer the client cut after it began (Codex and Claude Code users interrupt turns) often ends
// before the upstream reported its usage: OpenAI's streams report it in their last event. The
// vendor still bills the prompt, which on an agent's turn is most of the cost. (A stream the
// upstream broke is not counted: whether a vendor bills its own failure is not known.) When the
// route's vendor has a count endpoint (VendorAdapter.countTokens), the prompt as it was sent is
// counted there, after the answer, so the record, the cost and the budgets carry it
// (extras.usage_counted: "input"); the output generated before the cut is not known and counts as 0.
import { emptyUsage, type CanonicalRequest } from '../canonical/types.ts';
import type { UpstreamRequest } from '../hooks.ts';
import type { RequestRecord } from './request-record.ts';

/** The count is worth this much of the finished request's time at most. */
export const CUT_COUNT_TIMEOUT_MS = 5_000;

/** Whether the record's answer began, the client cut it, and the upstream reported no usage. */
export function cutWithoutUsage(record: RequestRecord): boolean {
  return record.clientAborted && record.usage === null && record.route !== null && record.status >= 200 && record.status < 400;
}

/**
 * Sets the record's usage to the prompt's count by the vendor, when it has a count endpoint and
 * answers in time. `resend` makes the request as it was sent (its body is not kept meanwhile);
 * `prompt`, the same in canonical form, for a counter that takes another shape.
 */
export async function countCutPrompt(record: RequestRecord, resend: () => UpstreamRequest, prompt?: () => CanonicalRequest): Promise<void> {
  const adapter = record.route?.adapter;
  if (!adapter?.countTokens) return;
  let counted: number | null;
  try {
    // The request's own signal fired when the client left: the count gets its own deadline.
    counted = await adapter.countTokens({ ...resend(), signal: AbortSignal.timeout(CUT_COUNT_TIMEOUT_MS) }, prompt);
  } catch {
    return;
  }
  if (counted === null || !Number.isInteger(counted) || counted < 0) return;
  record.usage = { ...emptyUsage(), input_tokens: counted };
  record.extras.usage_counted = 'input';
}
