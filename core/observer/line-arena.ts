// The queue of a line-writing usage backend keeps its lines here, as UTF-8 in 1 MiB chunks
// outside the JS heap, in order; the batch queue holds only each line's byte length (a small
// integer, no object). A queued line used to be the JSON string itself: a batch takes ~100 ms to
// fill under load, so its strings outlived two scavenges and were promoted. Sampled each second
// under the bench's two passthrough streams (16 and 64 connections): old space grew ~8 MB/s between
// full collections with strings, ~2.5 MB/s with logging off and the same with this, and RSS peaked
// at 218, 193 and 191 MB; throughput unchanged (npm run bench:compare, 16 rounds: 1.000).
//
// Lines are appended at the tail and leave from the head once written or dropped. A line never
// spans two chunks. Chunks are reused: a backend must be done with the buffers it is given when
// the promise of that write settles.

const CHUNK_BYTES = 1024 * 1024;
/** Emptied chunks kept for reuse (allocating one is external memory that V8 must account for). */
const SPARE_CHUNKS = 2;

interface Chunk {
  buf: Buffer;
  /** Bytes written to it so far. */
  end: number;
}

export class LineArena {
  /** In order; the head is in the first, the tail in the last. */
  private chunks: Chunk[] = [];
  /** Read offset in chunks[0]. */
  private head = 0;
  private spare: Buffer[] = [];

  /**
   * Room for a line of at most `worst` bytes, its newline included: the chunk to write it into,
   * from `end`. The line is held once commit() says where it ends; until then nothing changes.
   */
  reserve(worst: number): Buffer {
    let last = this.chunks.at(-1);
    if (!last || last.end + worst > last.buf.length) {
      last = { buf: this.newChunk(worst), end: 0 };
      this.chunks.push(last);
    }
    return last.buf;
  }

  /** Where the next line starts in the buffer reserve() returns. */
  get end(): number {
    return this.chunks.at(-1)?.end ?? 0;
  }

  /** Holds the line written from `end` up to `lineEnd` (its newline included); returns its bytes. */
  commit(lineEnd: number): number {
    const last = this.chunks.at(-1);
    if (!last || lineEnd < last.end || lineEnd > last.buf.length) throw new Error('commit outside the reserved room');
    const bytes = lineEnd - last.end;
    last.end = lineEnd;
    return bytes;
  }

  /** Takes back the line just committed (`bytes` as commit returned). */
  unappend(bytes: number): void {
    const last = this.chunks.at(-1);
    if (!last || last.end - bytes < (this.chunks.length === 1 ? this.head : 0)) throw new Error('unappend past the head');
    last.end -= bytes;
  }

  /** The next `bytes` from the head, as views (one per chunk); they stay queued until consume(). */
  peek(bytes: number): Buffer[] {
    const out: Buffer[] = [];
    let offset = this.head;
    for (const chunk of this.chunks) {
      if (bytes <= 0) break;
      const take = Math.min(chunk.end - offset, bytes);
      if (take > 0) out.push(chunk.buf.subarray(offset, offset + take));
      bytes -= take;
      offset = 0;
    }
    if (bytes > 0) throw new Error('peek past the tail');
    return out;
  }

  /** Lets go of the next `bytes` from the head (written or dropped). */
  consume(bytes: number): void {
    while (bytes > 0) {
      const first = this.chunks[0];
      const take = first ? Math.min(first.end - this.head, bytes) : 0;
      if (!first || (take === 0 && this.chunks.length === 1)) throw new Error('consume past the tail');
      this.head += take;
      bytes -= take;
      if (this.head < first.end) break;
      if (this.chunks.length === 1) {
        // The tail chunk, emptied: start it over.
        first.end = 0;
        this.head = 0;
        break;
      }
      this.chunks.shift();
      this.head = 0;
      if (first.buf.length === CHUNK_BYTES && this.spare.length < SPARE_CHUNKS) this.spare.push(first.buf);
    }
  }

  /** Lets go of everything (the queue dropped what it held at shutdown). */
  clear(): void {
    this.chunks = [];
    this.head = 0;
  }

  /** Bytes held (appended, not yet consumed). */
  get size(): number {
    let total = -this.head;
    for (const chunk of this.chunks) total += chunk.end;
    return total;
  }

  private newChunk(atLeast: number): Buffer {
    if (atLeast > CHUNK_BYTES) return Buffer.allocUnsafeSlow(atLeast);
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(CHUNK_BYTES);
  }
}
