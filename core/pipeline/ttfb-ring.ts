// A binding's recent times to first byte (issue 42 item 5): the last TTFB_SAMPLES observations in a
// fixed ring, and their 95th percentile, from which a hedge waits (hedge.ts).

/** Observations kept per binding. */
export const TTFB_SAMPLES = 100;

export class TtfbRing {
  private readonly samples = new Float64Array(TTFB_SAMPLES);
  private next = 0;
  /** Observations held, at most TTFB_SAMPLES. */
  size = 0;

  add(ms: number): void {
    this.samples[this.next] = ms;
    this.next = (this.next + 1) % TTFB_SAMPLES;
    if (this.size < TTFB_SAMPLES) this.size++;
  }

  /** The nearest-rank 95th percentile of the observations held (NaN when none). */
  p95(): number {
    if (this.size === 0) return Number.NaN;
    const sorted = this.samples.slice(0, this.size).sort();
    return sorted[Math.ceil(0.95 * this.size) - 1]!;
  }
}
