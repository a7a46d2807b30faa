// What a passed-through stream's output frames carried, for an answer whose usage never came
// (unreported-usage.ts). The tap does not parse output frames (most vendors' inspectors tell them by
// name or indexOf), so it only counts them and keeps a sample spread over the answer; at the end, and
// only for an answer without usage, the sample is parsed and its generated text scaled to every
// frame. Not the frames' lengths: OpenAI pads its frames (`obfuscation`) so a frame's length does not
// tell its text's.
import { generatedChars } from '../canonical/output-token-estimate.ts';

/** Frames parsed at most, for an answer without usage: enough to even out short and long deltas. */
const SAMPLES = 16;
const OPEN_BRACE = 0x7b;

export class OutputFrames {
  private count = 0;
  /** Every `stride`-th frame, from the first: a sample of the whole answer, whatever its length. */
  private samples: string[] = [];
  private stride = 1;

  /**
   * An output frame on its way. Counted: JSON objects (not Chat's `[DONE]`), and not the `.done`
   * events of a Responses stream, which repeat the text their deltas carried.
   */
  add(event: string | undefined, data: string): void {
    if (data.charCodeAt(0) !== OPEN_BRACE || event?.endsWith('.done')) return;
    if (this.count++ % this.stride !== 0) return;
    if (this.samples.length === SAMPLES) {
      // Full: every other sample goes and the stride doubles, so the samples stay spread over the answer.
      this.samples = this.samples.filter((_, i) => i % 2 === 0);
      this.stride *= 2;
      if ((this.count - 1) % this.stride !== 0) return;
    }
    this.samples.push(data);
  }

  /** The characters of generated output the frames carried: the sample's text, scaled to every frame. */
  chars(): number {
    let text = 0;
    for (const data of this.samples) {
      try {
        text += generatedChars(JSON.parse(data));
      } catch {
        // not JSON after all: no text read of it
      }
    }
    return this.samples.length === 0 ? 0 : Math.round(text * this.count / this.samples.length);
  }
}
