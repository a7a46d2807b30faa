// The host's timeoutMs bounds the wait between a stream's events, not only between its bytes: an
// upstream (often a proxy whose backend hung) that sends nothing but keep-alive comments, or
// events named `ping` (Anthropic's keep-alive), would otherwise hold the caller's stream open for
// as long as it keeps sending them. The callers leave pings out of the count of events.
import { RelayError } from '../errors.ts';

export class EventIdleBound {
  private seen: number;
  /** When the first chunk without a new event came, since the last event; null while events come. */
  private quietSince: number | null = null;

  /** `events`: the count of events read so far, when the bound starts. */
  constructor(private readonly timeoutMs: number, events: number) {
    this.seen = events;
  }

  /**
   * After each chunk, with the count of events read so far and whether a frame is still coming
   * (a long one arrives in many reads): throws once only keep-alives came for timeoutMs.
   */
  check(events: number, midFrame: boolean): void {
    if (events !== this.seen || midFrame) {
      this.seen = events;
      this.quietSince = null;
      return;
    }
    // The clock is read only for chunks that brought no event: not on an ordinary stream's path.
    const now = Date.now();
    if (this.quietSince === null) this.quietSince = now;
    else if (now - this.quietSince >= this.timeoutMs) {
      throw new RelayError('RELAY_ERR_UPSTREAM_TIMEOUT', `The upstream sent no event for ${this.timeoutMs} ms (the host's timeoutMs), only keep-alives.`);
    }
  }
}
