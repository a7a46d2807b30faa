// Server-sent events: framing out, incremental parsing in. The one SSE parser of the gateway, kept
// over eventsource-parser for two reasons: a frame is bounded (maxFrameBytes: an upstream that
// sends one endless line would otherwise grow memory until the request ends; an oversized frame is
// skipped up to its blank line and onOversize is told once), and it reads bytes, decoding only a
// line's value (2-2.7x faster on a chat stream; test/bench/RESULTS.md). UTF-8 needs no care across
// chunks: a line is decoded once all its bytes are here, and no multi-byte character contains a CR
// or LF byte. test/core/sse-parser.test.ts checks it against eventsource-parser on random splits.

/** One SSE frame. `event` is left out when undefined. */
export function sseFrame(event: string | undefined, data: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Largest frame a parser keeps by default: far above any vendor's frame (a Responses stream's
 * last frame repeats the whole answer), far below what many streams at once could not hold. */
export const DEFAULT_MAX_SSE_FRAME_BYTES = 16 * 1024 * 1024;

export interface SseParserOptions {
  /** Bytes of field lines one frame may hold (line ends not counted). Default 16 MiB. */
  maxFrameBytes?: number;
  /** Called once per frame that grew past maxFrameBytes; the frame is skipped, never delivered. */
  onOversize?: (limit: number) => void;
}

/** Feeds bytes, calls `onEvent` once per complete frame (a blank line after at least one data line). */
export class SseParser {
  /** Bytes of a line that has not ended yet, in arrival order. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** Bytes of the current frame's ended lines. */
  private frameBytes = 0;
  /** Inside an oversized frame: lines are dropped until a blank one. */
  private skipping = false;
  /** While skipping: the current line already had bytes in an earlier chunk (so it is not blank). */
  private skippedPartLine = false;
  private readonly maxFrameBytes: number;
  private readonly onOversize: ((limit: number) => void) | undefined;
  /** The last chunk ended with CR: an LF that starts the next one ends no second line. */
  private afterCr = false;
  private first = true;
  private event: string | undefined = undefined;
  /** The frame's only data line so far, not decoded yet (the chunk it is in, and where). */
  private dataBuf: Buffer | null = null;
  private dataStart = 0;
  private dataEnd = 0;
  /** The data of a frame with several data lines, decoded as they come (rare). */
  private data = '';
  private dataLines = 0;

  constructor(private readonly onEvent: (event: string | undefined, data: string) => void, options: SseParserOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_SSE_FRAME_BYTES;
    this.onOversize = options.onOversize;
  }

  /** A chunk's bytes may be read until the frame they belong to is delivered: do not change them after feeding. */
  feed(chunk: Buffer | Uint8Array | string): void {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.first) {
      const rest = this.skipBom(buf);
      if (rest === null) return;
      buf = rest;
    }
    let pos = 0;
    if (this.afterCr && buf.length > 0) {
      this.afterCr = false;
      if (buf[0] === LF) pos = 1;
    }
    // The next CR and LF, each searched again only once passed (most chunks have no CR at all).
    let cr = buf.indexOf(CR, pos);
    let lf = -2;
    while (pos < buf.length) {
      if (lf !== -1 && lf < pos) lf = buf.indexOf(LF, pos);
      if (cr !== -1 && cr < pos) cr = buf.indexOf(CR, pos);
      const end = cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf);
      if (end === -1) {
        this.keepPartial(pos === 0 ? buf : buf.subarray(pos));
        return;
      }
      if (this.skipping) {
        this.skipLine(end - pos);
      } else if (this.partial.length > 0) {
        this.partial.push(buf.subarray(pos, end));
        const line = Buffer.concat(this.partial);
        this.partial = [];
        this.partialBytes = 0;
        this.line(line, 0, line.length);
      } else {
        this.line(buf, pos, end);
      }
      pos = end + 1;
      if (buf[end] === CR) {
        if (end + 1 === buf.length) this.afterCr = true;
        else if (buf[end + 1] === LF) pos++;
      }
    }
  }

  /**
   * A frame has begun and not ended (a line still coming, data lines read, an oversized frame being
   * skipped): a stream's wait between events (pipeline/stream-idle.ts) is not idle then.
   */
  get midFrame(): boolean {
    return this.skipping || this.partialBytes > 0 || this.dataLines > 0;
  }

  /** Flushes a final frame that the upstream did not terminate with a blank line. */
  end(): void {
    if (this.skipping) {
      this.skipping = false;
      this.skippedPartLine = false;
      this.dispatch();
      return;
    }
    if (this.partial.length > 0) {
      const line = Buffer.concat(this.partial);
      this.partial = [];
      this.partialBytes = 0;
      this.line(line, 0, line.length);
    }
    this.dispatch();
  }

  /** The start of a line whose end has not come yet. */
  private keepPartial(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.skipping) {
      this.skippedPartLine = true;
      return;
    }
    this.partial.push(piece);
    this.partialBytes += piece.length;
    if (this.frameBytes + this.partialBytes > this.maxFrameBytes) {
      this.startSkipping();
      this.skippedPartLine = true;
    }
  }

  /** Drops the frame in progress and every line up to its blank line. */
  private startSkipping(): void {
    this.partial = [];
    this.partialBytes = 0;
    this.skipping = true;
    this.dispatch(false);
    this.onOversize?.(this.maxFrameBytes);
  }

  /** A line ended inside an oversized frame: only a blank one (the frame's end) matters. */
  private skipLine(length: number): void {
    const blank = length === 0 && !this.skippedPartLine;
    this.skippedPartLine = false;
    if (blank) this.skipping = false;
  }

  /** The stream's start without its BOM (EF BB BF), or null while too few bytes came to tell. */
  private skipBom(buf: Buffer): Buffer | null {
    const head = this.partial.length > 0 ? Buffer.concat([...this.partial, buf]) : buf;
    this.partial = [];
    if (head.length < BOM.length && BOM.subarray(0, head.length).equals(head)) {
      this.partial.push(head);
      return null;
    }
    this.first = false;
    return head.subarray(0, BOM.length).equals(BOM) ? head.subarray(BOM.length) : head;
  }

  private line(buf: Buffer, start: number, end: number): void {
    if (start === end) {
      this.dispatch();
      return;
    }
    this.frameBytes += end - start;
    if (this.frameBytes > this.maxFrameBytes) {
      this.startSkipping();
      return;
    }
    const first = buf[start];
    if (first === COLON) return; // a comment
    // The usual lines first: `data:` and `event:`, checked byte by byte without decoding.
    if (first === 0x64 && buf[start + 1] === 0x61 && buf[start + 2] === 0x74 && buf[start + 3] === 0x61 && buf[start + 4] === COLON) {
      this.addData(buf, valueStart(buf, start + 5, end), end);
      return;
    }
    if (first === 0x65 && buf[start + 1] === 0x76 && buf[start + 2] === 0x65 && buf[start + 3] === 0x6e && buf[start + 4] === 0x74 && buf[start + 5] === COLON) {
      this.event = eventName(buf, valueStart(buf, start + 6, end), end);
      return;
    }
    // Any other field (`data` with no colon, `id`, `retry`, unknown ones).
    let colon = start;
    while (colon < end && buf[colon] !== COLON) colon++;
    const field = buf.toString('latin1', start, colon);
    if (field === 'data') this.addData(buf, colon === end ? end : valueStart(buf, colon + 1, end), end);
    else if (field === 'event') this.event = colon === end ? undefined : eventName(buf, valueStart(buf, colon + 1, end), end);
    // id and retry mean nothing to a proxy; unknown fields are ignored, as the spec says.
  }

  private addData(buf: Buffer, from: number, end: number): void {
    if (this.dataLines === 0) {
      this.dataBuf = buf;
      this.dataStart = from;
      this.dataEnd = end;
    } else {
      this.data = `${this.takeData()}\n${buf.toString('utf8', from, end)}`;
    }
    this.dataLines++;
  }

  /** The frame's data so far, decoded; lets go of the chunk it was in. */
  private takeData(): string {
    const buf = this.dataBuf;
    if (buf === null) return this.data;
    this.dataBuf = null;
    return buf.toString('utf8', this.dataStart, this.dataEnd);
  }

  /** Ends the frame in progress: delivers it when it has data (and `deliver` is not false). */
  private dispatch(deliver = true): void {
    const { event, dataLines } = this;
    const data = deliver && dataLines > 0 ? this.takeData() : '';
    this.event = undefined;
    this.dataBuf = null;
    this.data = '';
    this.dataLines = 0;
    this.frameBytes = 0;
    if (!deliver || dataLines === 0) return;
    this.onEvent(event, data);
  }
}

/** Where a field's value starts: after the colon, less one leading space. */
function valueStart(buf: Buffer, from: number, end: number): number {
  return from < end && buf[from] === SPACE ? from + 1 : from;
}

/** The event name in `buf` from `from` to `end`, or undefined when it is empty. */
function eventName(buf: Buffer, from: number, end: number): string | undefined {
  return end > from ? buf.toString('utf8', from, end) : undefined;
}
