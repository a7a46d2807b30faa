// Model fallbacks (issue 42): which condition a failed model's last failure was, whether a
// fallback entry takes it, and the client's answer when no fallback does.
import { RelayError } from '../errors.ts';
import type { FallbackCondition, Model } from '../catalog/kinds.ts';
import type { FailureKind } from './key-health.ts';

export const FALLBACK_CONDITIONS: readonly FallbackCondition[] = ['server_error', 'timeout', 'rate_limit', 'no_healthy_binding', 'content_filter', 'context_window_exceeded'];

/**
 * Why a fallback was passed over without a try: deleted since, not granted to the key, refused by
 * a budget, or (proxy mode) bound only to hosts other than the requested model's.
 */
export type FallbackSkip = 'not_found' | 'not_granted' | 'budget' | 'other_host';

/** One model tried (or skipped) for a request, as the usage record lists it. */
export interface ModelAttempt {
  model: string;
  /** Why the request moved on from it; absent for the model that answered. */
  outcome?: FallbackCondition | FallbackSkip;
}

/** The fallback condition an upstream failure stands for. */
export function conditionOfFailure(kind: FailureKind): FallbackCondition {
  if (kind === 'rate_limit') return 'rate_limit';
  if (kind === 'timeout') return 'timeout';
  // Every key refused by the upstream: the model has no usable binding left.
  if (kind === 'auth') return 'no_healthy_binding';
  return 'server_error';
}

/** The condition a resolver refusal stands for, or null when it is the caller's to see (not granted, unknown model). */
export function conditionOfRefusal(err: unknown): FallbackCondition | null {
  if (!(err instanceof RelayError)) return null;
  if (err.code === 'RELAY_ERR_UPSTREAM_RATE_LIMITED') return 'rate_limit';
  if (err.code === 'RELAY_ERR_NO_HEALTHY_KEY' || err.code === 'RELAY_ERR_NO_USABLE_HOST_KEY') return 'no_healthy_binding';
  return null;
}

export function takes(entry: NonNullable<Model['spec']['fallbacks']>[number], condition: FallbackCondition): boolean {
  return (entry.on ?? FALLBACK_CONDITIONS).includes(condition);
}

/** The answer when every binding failed for `condition` and no fallback took it (the upstream's own body is gone). */
export function exhausted(model: string, condition: FallbackCondition, retryAfterMs: number | null = null): RelayError {
  if (condition === 'rate_limit') {
    // The upstream's own retry-after when a retry policy found it too long to wait for.
    const after = String(Math.max(1, Math.ceil((retryAfterMs ?? 1000) / 1000)));
    return new RelayError('RELAY_ERR_UPSTREAM_RATE_LIMITED', `The model \`${model}\` (and its fallbacks, if any) is rate-limited by the upstream; try again later.`, { headers: { 'retry-after': after } });
  }
  if (condition === 'context_window_exceeded') {
    return new RelayError('RELAY_ERR_CONTEXT_WINDOW_EXCEEDED', `The prompt is longer than the context window of the model \`${model}\` and of its fallbacks.`);
  }
  if (condition === 'content_filter') return new RelayError('RELAY_ERR_CONTENT_FILTERED', `The upstream's content filter refused the request to the model \`${model}\`, and no fallback answered it.`);
  if (condition === 'timeout') return new RelayError('RELAY_ERR_UPSTREAM_TIMEOUT', `The model \`${model}\` and its fallbacks did not answer in time.`);
  if (condition === 'no_healthy_binding') return new RelayError('RELAY_ERR_NO_HEALTHY_KEY', `No healthy host key is available for the model \`${model}\` or its fallbacks; try again later.`, { headers: { 'retry-after': '1' } });
  return new RelayError('RELAY_ERR_UPSTREAM_UNREACHABLE', `No upstream could serve the model \`${model}\` or its fallbacks.`);
}
