// The last bytes of a passthrough stream, kept as the chunks that came (never copied while the
// stream flows) so that the tap can read the frames that matter from the end once the stream is
// over, instead of framing and decoding every chunk as it passes (StreamInspector.inspectFromEnd).
// The tap of a 200-delta Anthropic stream went from 27 to 13 us fed a frame at a time (as an
// upstream that generates sends it), from 21 to 6 us in one chunk (test/bench/sse-tap.ts).
import { BackwardsFrameReader, FOUND, STREAM_START, type Visit } from '../http/sse-backwards.ts';

/** Bytes kept from a stream's end (at least, when the stream was that long): as usage-copy.ts keeps of a body. */
export const STREAM_TAIL_BYTES = 256 * 1024;
/** The first look reads this much of the end: the last frames of most streams fit in it. */
const FIRST_LOOK_BYTES = 8 * 1024;

/** Enough of the bytes before the kept ones to tell whether they end a frame (CR LF CR LF at most). */
const EDGE_BYTES = 4;

export class StreamTail {
  /** Chunks added so far (whether kept or let go). */
  added = 0;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  /** The last bytes let go, once the stream's start was: whether the kept bytes start a frame. */
  private before: Buffer | null = null;

  constructor(private readonly keepBytes = STREAM_TAIL_BYTES) {}

  add(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.added++;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.chunks.length > 1 && this.bytes - this.chunks[0]!.length >= this.keepBytes) {
      const dropped = this.chunks.shift()!;
      this.bytes -= dropped.length;
      const edge = dropped.length >= EDGE_BYTES || this.before === null ? dropped : Buffer.concat([this.before, dropped]);
      this.before = Buffer.from(edge.subarray(Math.max(edge.length - EDGE_BYTES, 0)));
    }
  }

  /**
   * Calls `visit` with the kept frames, newest first, until it returns true; true when it did.
   * Chunk by chunk while each holds whole frames (an upstream writes a frame or a few at a time),
   * with no copy; a frame that runs across chunks is read from a copy of the chunks it spans,
   * FIRST_LOOK_BYTES of them first and eight times as many each time that does not reach its start.
   * A frame `visit` returned false for may be visited again, so visiting one must be idempotent.
   */
  visitBackwards(visit: Visit): boolean {
    const reader = new BackwardsFrameReader(visit);
    const { chunks } = this;
    // chunks[0, end) are still to read, and `rest`: the first bytes of what was read last, which
    // end a frame that started earlier.
    let end = chunks.length;
    let rest: Buffer | null = null;
    let look = FIRST_LOOK_BYTES;
    while (end > 0) {
      let from = end - 1;
      let buf = chunks[from]!;
      if (rest !== null) {
        let size = rest.length + buf.length;
        while (from > 0 && size < look) size += chunks[--from]!.length;
        buf = Buffer.concat([...chunks.slice(from, end), rest], size);
        look *= 8;
      }
      const unread = reader.read(buf, from > 0 ? chunks[from - 1]! : this.before ?? STREAM_START);
      if (unread === FOUND) return true;
      rest = unread > 0 ? buf.subarray(0, unread) : null;
      end = from;
    }
    return false;
  }
}
