// Reads SSE frames from the end of a stream backwards: the newest frame first. The passthrough tap
// uses it to read a stream's last frames (its usage, an error that ended it) without framing the
// bytes before them (core/pipeline/stream-tail.ts).
//
// A frame ends at a blank line: two line ends in a row, where a line end is CR, LF or CRLF. In a
// run of CR and LF bytes, every adjacent pair ends a blank line but for CR followed by LF (one line
// end), so a run of three or more bytes, or of two other than CR LF, is a frame boundary.
// Each frame's own lines are parsed by SseParser, so fields, comments and the BOM mean here what
// they mean to the forward parser (test/core/sse-backwards.test.ts compares the two).
import { SseParser } from './sse.ts';

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

/** `before` for bytes that start the stream. */
export const STREAM_START = Symbol('stream start');
/** read() found what the visitor looked for. */
export const FOUND = -1;

export type Visit = (event: string | undefined, data: string) => boolean;

function isLineEnd(byte: number | undefined): boolean {
  return byte === LF || byte === CR;
}

export class BackwardsFrameReader {
  private readonly parser: SseParser;
  private found = false;

  constructor(visit: Visit) {
    this.parser = new SseParser((event, data) => {
      this.found = visit(event, data);
    });
    // Its first feed would take bytes EF BB BF for a BOM: read() strips the stream's own.
    this.parser.feed(BLANK_LINE);
  }

  /**
   * Hands the frames of `buf` to the visitor, newest first, until it returns true (then FOUND).
   * `before` is what came just before `buf` (its last bytes tell whether `buf` starts a frame),
   * or STREAM_START. Returns how many of `buf`'s first bytes were not read, being the end of a
   * frame that started before it (0 when every frame in it was read).
   */
  read(buf: Buffer, before: Buffer | typeof STREAM_START): number {
    let end = buf.length;
    while (end > 0) {
      let contentEnd = end;
      while (contentEnd > 0 && isLineEnd(buf[contentEnd - 1])) contentEnd--;
      if (contentEnd === 0) return 0;
      const start = frameStart(buf, contentEnd);
      if (start === 0) {
        const first = this.readFirst(buf, contentEnd, before);
        return first === 'found' ? FOUND : first === 'read' ? 0 : end;
      }
      if (this.readFrame(buf, start, contentEnd)) return FOUND;
      end = start;
    }
    return 0;
  }

  /** The frame that reaches `buf`'s start, read only when `before` shows that it starts there. */
  private readFirst(buf: Buffer, contentEnd: number, before: Buffer | typeof STREAM_START): 'found' | 'read' | 'unread' {
    let lead = 0;
    while (isLineEnd(buf[lead])) lead++;
    if (!startsFrame(before, buf, lead)) return 'unread';
    const bom = before === STREAM_START && lead === 0 && buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2];
    return this.readFrame(buf, bom ? 3 : lead, contentEnd) ? 'found' : 'read';
  }

  private readFrame(buf: Buffer, start: number, end: number): boolean {
    this.parser.feed(buf.subarray(start, end));
    this.parser.end();
    return this.found;
  }
}

const BLANK_LINE = Buffer.from('\n');

/** Where the frame ending at `end` starts: after the blank line before it, or 0 when none is in `buf`. */
function frameStart(buf: Buffer, end: number): number {
  let i = end - 1;
  while (i >= 0) {
    if (!isLineEnd(buf[i])) {
      i--;
      continue;
    }
    const runEnd = i + 1;
    while (i >= 0 && isLineEnd(buf[i])) i--;
    // A run that reaches the start of buf may go on in the bytes before it: startsFrame decides.
    if (i < 0) return 0;
    if (isBoundary(buf, i + 1, runEnd)) return runEnd;
  }
  return 0;
}

function isBoundary(bytes: Buffer, from: number, to: number): boolean {
  const length = to - from;
  return length >= 3 || (length === 2 && !(bytes[from] === CR && bytes[from + 1] === LF));
}

/**
 * Whether a frame starts after `buf`'s first `lead` bytes (line ends): whether those and the line
 * ends that `before` ends with make a boundary. False when it cannot be told (every byte of a short
 * `before` is a line end, so the run may start earlier): the caller then reads on further back.
 */
function startsFrame(before: Buffer | typeof STREAM_START, buf: Buffer, lead: number): boolean {
  if (before === STREAM_START) return true;
  let tail = 0;
  while (tail < before.length && isLineEnd(before[before.length - 1 - tail])) tail++;
  const length = tail + lead;
  if (length >= 3) return true;
  if (tail === before.length || length < 2) return false; // with every byte of `before` a line end, the run may start earlier
  const first = tail > 0 ? before[before.length - tail] : buf[0];
  const second = tail === 2 ? before[before.length - 1] : buf[lead - 1];
  return !(first === CR && second === LF);
}
