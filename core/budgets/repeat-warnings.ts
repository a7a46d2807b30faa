// The warnings of a budget's operation that keeps failing (a read of its spend, an increment of
// its shared total, the recording of an alert), rate-limited per budget and operation: a backend
// that fails fast would otherwise log a line per budget every second (a budget whose spend is
// unknown is read again every UNKNOWN_RETRY_MS, a shared total every SHARED_READ_MS) or on every
// request (an increment, an alert tried again) for as long as the outage lasts. The first failure
// warns; the same failure again warns at most once per REPEAT_WARN_MS, saying how many were not
// logged since; a different one warns at once; the first that succeeds after failures says so
// once, at info. A failure is placed at its operation's start: reads of one budget run one at a
// time, and a read that waited out its deadline is not moved later.

/** Least time between two warnings of the same failure of the same operation. */
export const REPEAT_WARN_MS = 60_000;

const failures = (n: number): string => `${n} ${n === 1 ? 'failure' : 'failures'}`;

export interface RepeatWarningsLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

interface Failing {
  /** What the failure is (the line and the error's message): a different one warns at once. */
  what: string;
  /** Failures since the last success. */
  failures: number;
  /** Failures since the last warning, not logged. */
  notLogged: number;
  warnedAt: number;
}

export class RepeatWarnings {
  private readonly failing = new Map<string, Failing>();

  /** `operation` names what fails in the repeat line: "(4 failures of this read not logged ...)". */
  constructor(private readonly log: RepeatWarningsLog, private readonly operation: string) {}

  /** A failure of the operation `key` (a budget's and what it does) begun at `at`: warns unless the same one did less than REPEAT_WARN_MS before. */
  failed(key: string, at: number, fields: Record<string, unknown>, msg: string): void {
    const err = fields.err;
    const what = `${msg}\n${err instanceof Error ? err.message : typeof err === 'string' ? err : ''}`;
    const f = this.failing.get(key);
    if (f && f.what === what && at - f.warnedAt < REPEAT_WARN_MS) {
      f.failures++;
      f.notLogged++;
      return;
    }
    if (f && f.notLogged > 0) {
      this.log.warn({ ...fields, notLogged: f.notLogged }, `${msg} (${failures(f.notLogged)} of this ${this.operation} not logged since its last warning)`);
    } else {
      this.log.warn(fields, msg);
    }
    this.failing.set(key, { what, failures: (f?.failures ?? 0) + 1, notLogged: 0, warnedAt: at });
  }

  /** The operation `key` succeeded: after failures, says so once. */
  answered(key: string, fields: Record<string, unknown>, msg: string): void {
    // Nothing failing, as on almost every call: no lookup.
    if (this.failing.size === 0) return;
    const f = this.failing.get(key);
    if (!f) return;
    this.failing.delete(key);
    this.log.info({ ...fields, failures: f.failures }, `${msg} (after ${failures(f.failures)})`);
  }

  /** Forgets the operations of a key prefix (a deleted budget's). */
  forget(prefix: string): void {
    for (const key of this.failing.keys()) if (key.startsWith(prefix)) this.failing.delete(key);
  }
}
