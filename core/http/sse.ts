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

/** One SSE frame. `event` is left out when undefined. */
export function sseFrame(event: string | undefined, data: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Feeds bytes, calls `onEvent` once per complete frame (a blank line after at least one data line). */
export class SseParser {
  /** Bytes of a line that has not ended yet, in arrival order. */
  private partial: Buffer[] = [];
  /** The last chunk ended with CR: an LF that starts the next one ends no second line. */
  private afterCr = false;
  private first = true;
  private event: string | undefined = undefined;
  private data = '';
  private dataLines = 0;

  constructor(private readonly onEvent: (event: string | undefined, data: string) => void) {}

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
        this.partial.push(pos === 0 ? buf : buf.subarray(pos));
        return;
      }
      if (this.partial.length > 0) {
        this.partial.push(buf.subarray(pos, end));
        const line = Buffer.concat(this.partial);
        this.partial = [];
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

  /** Flushes a final frame that the upstream did not terminate with a blank line. */
  end(): void {
    if (this.partial.length > 0) {
      const line = Buffer.concat(this.partial);
      this.partial = [];
      this.line(line, 0, line.length);
    }
    this.dispatch();
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
    const first = buf[start];
    if (first === COLON) return; // a comment
    // The usual lines first: `data:` and `event:`, checked byte by byte without decoding.
    if (first === 0x64 && buf[start + 1] === 0x61 && buf[start + 2] === 0x74 && buf[start + 3] === 0x61 && buf[start + 4] === COLON) {
      this.addData(valueOf(buf, start + 5, end));
      return;
    }
    if (first === 0x65 && buf[start + 1] === 0x76 && buf[start + 2] === 0x65 && buf[start + 3] === 0x6e && buf[start + 4] === 0x74 && buf[start + 5] === COLON) {
      this.event = valueOf(buf, start + 6, end) || undefined;
      return;
    }
    // Any other field (`data` with no colon, `id`, `retry`, unknown ones).
    let colon = start;
    while (colon < end && buf[colon] !== COLON) colon++;
    const field = buf.toString('latin1', start, colon);
    if (field === 'data') this.addData(colon === end ? '' : valueOf(buf, colon + 1, end));
    else if (field === 'event') this.event = colon === end ? undefined : valueOf(buf, colon + 1, end) || undefined;
    // id and retry mean nothing to a proxy; unknown fields are ignored, as the spec says.
  }

  private addData(value: string): void {
    this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`;
    this.dataLines++;
  }

  private dispatch(): void {
    const { event, data, dataLines } = this;
    this.event = undefined;
    this.data = '';
    this.dataLines = 0;
    if (dataLines > 0) this.onEvent(event, data);
  }
}

/** A field's value: after the colon, less one leading space. */
function valueOf(buf: Buffer, from: number, end: number): string {
  return buf.toString('utf8', buf[from] === SPACE ? from + 1 : from, end);
}
