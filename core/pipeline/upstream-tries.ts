// Every upstream attempt of one request and why it moved on (issue 42 item 6), for the usage
// record's extras.relay_attempts: the log detail shows it, next to relay_model_attempts.

export interface UpstreamTry {
  model: string;
  host: string;
  /** answered (its answer went to the client), or why the request moved on from it. */
  outcome: string;
  /** The upstream's status when it answered one. */
  status?: number;
  /** The wait (backoff or retry-after) before the next try of the same binding. */
  waitMs?: number;
}

export class UpstreamTries {
  readonly list: UpstreamTry[] = [];

  add(entry: UpstreamTry): void {
    this.list.push(entry);
  }

  /** Notes the wait before the next try on the latest entry. */
  waited(ms: number): void {
    const last = this.list[this.list.length - 1];
    if (last) last.waitMs = ms;
  }

  /** The JSON the record keeps, or null when one attempt answered (nothing to tell). */
  toExtra(): string | null {
    if (this.list.length === 0 || (this.list.length === 1 && this.list[0].outcome === 'answered')) return null;
    return JSON.stringify(this.list);
  }
}
