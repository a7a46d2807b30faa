// Runs of upstream failures (5xx, timeouts, refused connections) per host or host key, for the
// circuit breaker in key-health.ts: only `failures` in a row within `windowMs` open a circuit,
// so one caller whose body makes the upstream fail cannot take a shared key away (issue 37).
// A host key's run is about one version of it (key-version.ts): a request sent before an edit
// neither ends nor lengthens the run of the version in use since.
import { olderVersion } from './key-version.ts';

export interface BreakerSettings {
  /** Failures in a row (no success between them) that open the circuit. */
  failures: number;
  /** The run counts only failures this recent. */
  windowMs: number;
  /** How long an open circuit refuses requests before one probe is let through (half-open). */
  openMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = { failures: 5, windowMs: 30_000, openMs: 15_000 };

interface Run {
  /** The host key's version the failures were met with (none for a host). */
  version: string | undefined;
  /** The times of the failures of the run, the oldest first (at most `failures`). */
  times: number[];
}

export class FailureRuns {
  private readonly runs = new Map<string, Run>();

  constructor(private readonly settings: BreakerSettings) {}

  /** Counts a failure; true when it completes a run of `failures` within the window (the run restarts). */
  add(id: string, now: number, version?: string): boolean {
    let run = this.runs.get(id);
    if (run && run.version !== version) {
      if (olderVersion(version, run.version)) return false; // stale: met with the version before an edit
      run = undefined; // the key was edited: its new version starts afresh
    }
    if (!run) {
      run = { version, times: [] };
      this.runs.set(id, run);
    }
    const times = run.times;
    times.push(now);
    while (now - times[0]! > this.settings.windowMs) times.shift();
    if (times.length < this.settings.failures) return false;
    this.runs.delete(id);
    return true;
  }

  /** A success ends the run, unless it was met with a version older than the run's. */
  clear(id: string, version?: string): void {
    const run = this.runs.get(id);
    if (run && !olderVersion(version, run.version)) this.runs.delete(id);
  }
}
