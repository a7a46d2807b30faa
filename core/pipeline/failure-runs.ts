// Runs of upstream failures (5xx, timeouts, refused connections) per host or host key, for the
// circuit breaker in key-health.ts: only `failures` in a row within `windowMs` open a circuit,
// so one caller whose body makes the upstream fail cannot take a shared key away (issue 37).

export interface BreakerSettings {
  /** Failures in a row (no success between them) that open the circuit. */
  failures: number;
  /** The run counts only failures this recent. */
  windowMs: number;
  /** How long an open circuit refuses requests before one probe is let through (half-open). */
  openMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { failures: 5, windowMs: 30_000, openMs: 15_000 };

export class FailureRuns {
  /** Per id, the times of the failures of the current run, the oldest first (at most `failures`). */
  private readonly runs = new Map<string, number[]>();

  constructor(private readonly settings: BreakerSettings) {}

  /** Counts a failure; true when it completes a run of `failures` within the window (the run restarts). */
  add(id: string, now: number): boolean {
    let run = this.runs.get(id);
    if (!run) {
      run = [];
      this.runs.set(id, run);
    }
    run.push(now);
    while (now - run[0]! > this.settings.windowMs) run.shift();
    if (run.length < this.settings.failures) return false;
    this.runs.delete(id);
    return true;
  }

  /** A success ends the run. */
  clear(id: string): void {
    this.runs.delete(id);
  }
}
