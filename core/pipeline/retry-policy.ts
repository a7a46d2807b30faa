// Retry policies (issue 42 item 2): how many tries of one binding and in all, the backoff between
// tries of a binding, the longest retry-after worth waiting for, which statuses are retried, and a
// deadline for the whole request before its first byte. No policy = Relay's behaviour before it:
// each binding tried once, at once, on 408, 429, 5xx and a refused key.
import { RelayError } from '../errors.ts';
import type { RetryPolicy } from '../catalog/kinds.ts';
import { classifyStatus, type StatusVerdict } from './failure.ts';
import type { FailureKind } from './key-health.ts';

export const DEFAULT_BACKOFF = { initialMs: 200, maxMs: 5_000, multiplier: 2, jitter: 0.5 };

/** The retry state of one request under its policy (or none). */
export class RetryRun {
  readonly perBinding: number;
  private readonly deadlineAt: number | null;
  private readonly controller: AbortController | null;
  private timer: NodeJS.Timeout | null = null;

  /** `committed` says whether the client already has bytes: the deadline never cuts an answer. */
  constructor(readonly policy: RetryPolicy | undefined, committed: () => boolean, private readonly random: () => number = Math.random) {
    this.perBinding = policy?.attemptsPerBinding ?? 1;
    const deadlineMs = policy?.deadlineMs;
    this.deadlineAt = deadlineMs === undefined ? null : Date.now() + deadlineMs;
    this.controller = deadlineMs === undefined ? null : new AbortController();
    if (deadlineMs !== undefined) {
      this.timer = setTimeout(() => {
        if (!committed()) this.controller!.abort(deadlineError(deadlineMs));
      }, deadlineMs);
      this.timer.unref();
    }
  }

  /** Aborts when the deadline passes before the first byte; null without a deadline. */
  get deadlineSignal(): AbortSignal | null {
    return this.controller?.signal ?? null;
  }

  get expired(): boolean {
    return this.controller?.signal.aborted === true || (this.deadlineAt !== null && Date.now() >= this.deadlineAt);
  }

  /** Throws the 504 when the deadline passed: no new attempt starts after it. */
  checkDeadline(): void {
    if (this.expired) throw deadlineError(this.policy!.deadlineMs!);
  }

  /** Whether `attempts` made so far leave room for another one. */
  mayTry(attempts: number): boolean {
    return this.policy?.maxAttempts === undefined || attempts < this.policy.maxAttempts;
  }

  /** Whether the next attempt is the last the policy allows in all (its failure is the client's answer). */
  lastAllowed(attempts: number): boolean {
    return this.policy?.maxAttempts !== undefined && attempts + 1 >= this.policy.maxAttempts;
  }

  /** What an upstream status means under the policy's retryOn (a refused key always moves on). */
  verdict(status: number): StatusVerdict {
    const verdict = classifyStatus(status);
    const listed = this.policy?.retryOn;
    if (listed === undefined || verdict.failure === 'auth') return verdict;
    if (!listed.includes(status)) return { retryable: false, failure: verdict.failure };
    return verdict.retryable ? verdict : { retryable: true, failure: null };
  }

  /**
   * How long to wait before trying the same binding again after its `tries`-th failure, or null to
   * move on: a refused key moves on; a 429 waits its retry-after when it is at most maxRetryAfterMs
   * (a longer one moves on), else the backoff; never past the deadline.
   */
  sameBindingDelay(tries: number, failure: FailureKind | null, retryAfterMs: number | null): number | null {
    if (tries >= this.perBinding || failure === 'auth') return null;
    let wait: number;
    if (failure === 'rate_limit' && retryAfterMs !== null) {
      if (retryAfterMs > (this.policy?.maxRetryAfterMs ?? 0)) return null;
      wait = retryAfterMs;
    } else {
      wait = this.backoffMs(tries);
    }
    if (this.deadlineAt !== null && Date.now() + wait >= this.deadlineAt) return null;
    return wait;
  }

  /** The backoff before try `tries + 1`: exponential, capped, with jitter taken off. */
  backoffMs(tries: number): number {
    const b = { ...DEFAULT_BACKOFF, ...this.policy?.backoff };
    const base = Math.min(b.maxMs, b.initialMs * b.multiplier ** (tries - 1));
    return Math.round(base * (1 - b.jitter * this.random()));
  }

  /** Waits `ms`, or less when `signal` (the client leaving) or the deadline aborts first. */
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const deadline = this.controller?.signal;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        deadline?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      deadline?.addEventListener('abort', done, { once: true });
    });
  }

  /** Stops the deadline's timer (the request is over). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Relay's behaviour without a retry policy: no timers, shared by every request that has none. */
export const NO_RETRY_POLICY = new RetryRun(undefined, () => true);

export function deadlineError(deadlineMs: number): RelayError {
  return new RelayError('RELAY_ERR_RETRY_DEADLINE', `No upstream answered within the retry policy's deadline of ${deadlineMs} ms.`);
}
