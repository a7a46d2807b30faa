// Server-sent events: framing out, incremental parsing in.
//
// The parser reads bytes, not text: lines are found with Buffer.indexOf (CR, LF and CRLF ends, as
// the SSE spec has them) and only a data or event line's value is decoded, as a slice of the
// chunk. Decoding whole chunks with a streaming TextDecoder and splitting the text (what
// eventsource-parser did here) took 2-2.7x as long on a 20-chunk chat stream (9.7-12.8 against
// 3.9-4.8 us; test/bench/sse-tap.ts).
// UTF-8 needs no care across chunks: a line is decoded only once all of its bytes are here, and
// no multi-byte character contains a CR or LF byte. test/core/sse-parser.test.ts checks it
// against eventsource-parser on random splits.
//
// A data line is decoded when its frame is delivered, and not at all when the frame's event name is
// in `skipData`: the passthrough tap classifies most Anthropic and Responses frames by their name
// alone (StreamInspector.outputEvents). Event names are decoded once and then matched as bytes
// (eventName below). On the 20-chunk Anthropic stream fed frame by frame, parser and inspector
// together went from 20.9 to 15.1 us (medians of six rounds, old and new in one process).
//
// A frame is bounded (maxFrameBytes): an upstream that sends one endless line, or data lines
// without the blank line that ends a frame, would otherwise grow memory until the request ends.
// An oversized frame is dropped, not buffered: its bytes are skipped up to its blank line and
// onOversize is told once.

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
  /** Frames with one of these event names are not decoded: `onSkipped` gets their name instead of onEvent. */
  skipData?: ReadonlySet<string>;
  onSkipped?: (event: string) => void;
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
  private readonly skipData: ReadonlySet<string> | undefined;
  private readonly onSkipped: ((event: string) => void) | undefined;
  private event: string | undefined = undefined;
  /** The frame's only data line so far, not decoded yet (the chunk it is in, and where). */
  private dataBuf: Buffer | null = null;
  private dataStart = 0;
  private dataEnd = 0;
  /** The data of a frame with several data lines, decoded as they come (rare). */
  private data = '';
  private dataLines = 0;
  /** stop() was called: nothing more is read. */
  private stopped = false;

  constructor(private readonly onEvent: (event: string | undefined, data: string) => void, options: SseParserOptions = {}) {
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_SSE_FRAME_BYTES;
    this.onOversize = options.onOversize;
    if (options.skipData && options.skipData.size > 0) {
      if (!options.onSkipped) throw new Error('SseParser: skipData needs onSkipped');
      this.skipData = options.skipData;
      this.onSkipped = options.onSkipped;
    }
  }

  /**
   * No more frames: the rest of the chunk being fed and every later one are ignored, end() too.
   * For a reader that has seen what it needed (the passthrough tap, once output flowed).
   */
  stop(): void {
    this.stopped = true;
  }

  /** A chunk's bytes may be read until the frame they belong to is delivered: do not change them after feeding. */
  feed(chunk: Buffer | Uint8Array | string): void {
    if (this.stopped) return;
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
      if (this.stopped) return;
      pos = end + 1;
      if (buf[end] === CR) {
        if (end + 1 === buf.length) this.afterCr = true;
        else if (buf[end + 1] === LF) pos++;
      }
    }
  }

  /** Flushes a final frame that the upstream did not terminate with a blank line. */
  end(): void {
    if (this.stopped) return;
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
    const skip = event !== undefined && this.skipData !== undefined && this.skipData.has(event);
    const data = deliver && dataLines > 0 && !skip ? this.takeData() : '';
    this.event = undefined;
    this.dataBuf = null;
    this.data = '';
    this.dataLines = 0;
    this.frameBytes = 0;
    if (!deliver || dataLines === 0) return;
    if (skip) this.onSkipped!(event);
    else this.onEvent(event, data);
  }
}

/** Where a field's value starts: after the colon, less one leading space. */
function valueStart(buf: Buffer, from: number, end: number): number {
  return from < end && buf[from] === SPACE ? from + 1 : from;
}

// Event names, decoded once and shared by every parser: a vendor's stream uses a few dozen, and
// decoding one per frame was ~0.35 us (a third of an Anthropic stream's parse). Bounded: names
// past the first NAME_CACHE_MAX (an upstream that makes them up) are decoded every time.
const NAME_CACHE_MAX = 64;
const cachedNameBytes: Buffer[] = [];
const cachedNames: string[] = [];

/** The event name in `buf` from `from` to `end`, or undefined when it is empty. */
function eventName(buf: Buffer, from: number, end: number): string | undefined {
  const length = end - from;
  if (length === 0) return undefined;
  search: for (let i = 0; i < cachedNameBytes.length; i++) {
    const bytes = cachedNameBytes[i]!;
    if (bytes.length !== length) continue;
    for (let k = length - 1; k >= 0; k--) if (bytes[k] !== buf[from + k]) continue search;
    return cachedNames[i];
  }
  const name = buf.toString('utf8', from, end);
  if (cachedNames.length < NAME_CACHE_MAX) {
    cachedNameBytes.push(Buffer.from(buf.subarray(from, end))); // a copy: the chunk is not kept
    cachedNames.push(name);
  }
  return name;
}
