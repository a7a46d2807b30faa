// An incremental HTTP/1.1 response reader for the lean upstream client: the status line and
// headers, then the body as RFC 9112 section 6.3 frames it (none, Content-Length, chunked, or up to
// the connection's close), chunked framing removed. It reads one response per request and says
// whether the connection may carry another; anything it does not accept is an error, and the
// connection carrying it is closed (never reused), so a misread can never hand one request's
// answer to the next.

export type ResponseHeaders = Record<string, string | string[]>;

export interface ResponseEvents {
  /** The final (non-1xx) head. */
  onHead(status: number, headers: ResponseHeaders): void;
  /** A piece of the body: a view into the buffer given to feed(). */
  onBody(chunk: Buffer): void;
  /** The body is complete. */
  onEnd(): void;
}

export class ResponseParseError extends Error {
  readonly code = 'UND_ERR_RESPONSE_PARSE';
  constructor(message: string) {
    super(`the upstream's answer is not valid HTTP/1.1: ${message}`);
  }
}

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_CHUNK_LINE = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;
const CR = 13;
const LF = 10;
const HEAD_END = Buffer.from('\r\n\r\n');
// RFC 9110 token characters, for header names.
const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const IS_TOKEN = new Uint8Array(128);
for (let i = 0; i < TOKEN_CHARS.length; i++) IS_TOKEN[TOKEN_CHARS.charCodeAt(i)] = 1;
// The reason phrase: HTAB, SP, visible ASCII and obs-text (RFC 9112 4).
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [\t\x20-\x7e\x80-\xff]*)?$/;
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let c = 0; c < 16; c++) {
  HEX_VALUE['0123456789abcdef'.charCodeAt(c)] = c;
  HEX_VALUE['0123456789ABCDEF'.charCodeAt(c)] = c;
}
const HEX_SIZE = /^[0-9A-Fa-f]{1,13}$/;

const enum State { Head, Fixed, ChunkLine, ChunkData, ChunkDataEnd, Trailers, UntilClose, Done }

export class ResponseParser {
  private state = State.Head;
  /** Bytes of a head, chunk-size line or trailer section not yet complete. */
  private pending: Buffer | null = null;
  private remaining = 0;
  private trailerBytes = 0;
  /** The connection may carry another request once this response ends. */
  reusable = true;

  /** @param noBody the request was HEAD: whatever the head says, no body follows. */
  constructor(private readonly events: ResponseEvents, private readonly noBody: boolean) {}

  get done(): boolean {
    return this.state === State.Done;
  }

  /** The body runs until the connection closes; close ends it rather than cutting it. */
  get endsAtClose(): boolean {
    return this.state === State.UntilClose;
  }

  /** Whether any part of the answer (a byte of its head) has come. */
  get started(): boolean {
    return this.state !== State.Head || this.pending !== null;
  }

  /**
   * Reads the bytes a socket delivered. Returns how many it used: fewer than given only when the
   * response ended inside them (bytes after an answer that nobody asked for).
   */
  feed(data: Buffer): number {
    let at = 0;
    while (at < data.length && this.state !== State.Done) {
      switch (this.state) {
        case State.Head: at = this.readHead(data, at); break;
        case State.Fixed: at = this.readFixed(data, at); break;
        case State.ChunkLine: at = this.readChunkLine(data, at); break;
        case State.ChunkData: at = this.readChunkData(data, at); break;
        case State.ChunkDataEnd: at = this.readChunkDataEnd(data, at); break;
        case State.Trailers: at = this.readTrailers(data, at); break;
        case State.UntilClose:
          this.events.onBody(at === 0 ? data : data.subarray(at));
          at = data.length;
          break;
      }
    }
    return at;
  }

  /** The connection closed: the end of a close-delimited body, else an error (the caller's). */
  close(): void {
    if (this.state === State.UntilClose) this.finish();
  }

  // ---- head

  private readHead(data: Buffer, at: number): number {
    const joined = this.pending ? Buffer.concat([this.pending, data.subarray(at)]) : at === 0 ? data : data.subarray(at);
    const base = this.pending ? this.pending.length : 0;
    // The head end may straddle the two pieces: search from just before the new bytes.
    const end = joined.indexOf(HEAD_END, Math.max(0, base - 3));
    if (end < 0) {
      if (joined.length > MAX_HEAD_BYTES) throw new ResponseParseError(`a head over ${MAX_HEAD_BYTES} bytes`);
      this.pending = Buffer.from(joined); // a copy: the socket's buffer is not ours to keep
      return data.length;
    }
    if (end + 4 > MAX_HEAD_BYTES) throw new ResponseParseError(`a head over ${MAX_HEAD_BYTES} bytes`);
    this.pending = null;
    const used = at + (end + 4 - base);
    this.parseHead(joined.toString('latin1', 0, end));
    return used;
  }

  /** The head as latin1 text without its final CR LF CR LF; one pass, no regex per line (a 23-header vendor head: 16 -> 3 us). */
  private parseHead(head: string): void {
    let lineEnd = head.indexOf('\r\n');
    if (lineEnd < 0) lineEnd = head.length;
    const statusMatch = STATUS_LINE.exec(head.slice(0, lineEnd));
    if (!statusMatch) throw new ResponseParseError(`the status line ${JSON.stringify(head.slice(0, Math.min(lineEnd, 64)))}`);
    const minor = statusMatch[1]!;
    const status = Number(statusMatch[2]);
    const headers: ResponseHeaders = {};
    let contentLength: string | null = null;
    let transferEncoding: string | null = null;
    let connection = '';
    for (let pos = lineEnd + 2; pos < head.length; pos = lineEnd + 2) {
      lineEnd = head.indexOf('\r\n', pos);
      if (lineEnd < 0) lineEnd = head.length;
      const name = headerName(head, pos, lineEnd);
      const value = headerValue(head, pos + name.length + 1, lineEnd);
      if (name === 'content-length') contentLength = contentLength === null ? value : `${contentLength}, ${value}`;
      else if (name === 'transfer-encoding') transferEncoding = transferEncoding === null ? value : `${transferEncoding}, ${value}`;
      else if (name === 'connection') connection += `,${value.toLowerCase()}`;
      addHeader(headers, name, value);
    }
    if (status < 200) {
      // 101 was never asked for; 100 and 103 are followed by the real answer.
      if (status === 101) throw new ResponseParseError('101 Switching Protocols to a request that asked for no upgrade');
      return;
    }
    if (minor === '0' || /(^|,)\s*close\s*(,|$)/.test(connection)) this.reusable = false;
    const bodyState = this.frameBody(status, minor, contentLength, transferEncoding);
    this.events.onHead(status, headers);
    if (bodyState === State.Done) this.finish();
    else this.state = bodyState;
  }

  /** The state the body starts in, from the head's framing headers; throws before any of the answer is handed on. */
  private frameBody(status: number, minor: string, contentLength: string | null, transferEncoding: string | null): State {
    // After a HEAD, as undici does: some servers send the body anyway, and a late one would be
    // read as the next request's answer.
    if (this.noBody) this.reusable = false;
    if (this.noBody || status === 204 || status === 304) return State.Done;
    if (transferEncoding !== null) {
      if (minor === '0') throw new ResponseParseError('Transfer-Encoding in an HTTP/1.0 answer');
      // With Content-Length beside it, Transfer-Encoding wins and the connection is not reused (RFC 9112 6.3).
      if (contentLength !== null) this.reusable = false;
      const codings = transferEncoding.toLowerCase().split(',').map((c) => c.trim());
      if (codings[codings.length - 1] === 'chunked') {
        if (codings.indexOf('chunked') !== codings.length - 1) throw new ResponseParseError('chunked applied twice');
        return State.ChunkLine;
      }
      this.reusable = false;
      return State.UntilClose;
    }
    if (contentLength !== null) {
      const values = contentLength.split(',').map((v) => v.trim());
      if (!values.every((v) => /^\d{1,15}$/.test(v) && v === values[0])) throw new ResponseParseError(`Content-Length ${JSON.stringify(contentLength.slice(0, 64))}`);
      this.remaining = Number(values[0]);
      return this.remaining === 0 ? State.Done : State.Fixed;
    }
    this.reusable = false;
    return State.UntilClose;
  }


  // ---- bodies

  private readFixed(data: Buffer, at: number): number {
    const take = Math.min(this.remaining, data.length - at);
    this.events.onBody(at === 0 && take === data.length ? data : data.subarray(at, at + take));
    this.remaining -= take;
    if (this.remaining === 0) this.finish();
    return at + take;
  }

  private readChunkLine(data: Buffer, at: number): number {
    // The common line, hex digits then CR LF, read from the bytes without making a string
    // (a stream is ~23 chunks; the string and regex path cost ~0.3 us each).
    if (this.pending === null) {
      let size = 0;
      let i = at;
      const limit = Math.min(data.length, at + 13);
      for (; i < limit; i++) {
        const digit = HEX_VALUE[data[i]!]!;
        if (digit < 0) break;
        size = size * 16 + digit;
      }
      if (i > at && i + 1 < data.length && data[i] === CR && data[i + 1] === LF) {
        this.remaining = size;
        this.state = size === 0 ? State.Trailers : State.ChunkData;
        return i + 2;
      }
    }
    const lf = data.indexOf(LF, at);
    if (lf < 0) {
      this.keepPending(data, at, MAX_CHUNK_LINE, 'a chunk-size line');
      return data.length;
    }
    const line = this.takePending(data, at, lf, MAX_CHUNK_LINE, 'a chunk-size line');
    const semicolon = line.indexOf(';');
    const size = trimOws(semicolon < 0 ? line : line.slice(0, semicolon));
    if (!HEX_SIZE.test(size)) throw new ResponseParseError(`the chunk size ${JSON.stringify(line.slice(0, 32))}`);
    this.remaining = parseInt(size, 16);
    this.state = this.remaining === 0 ? State.Trailers : State.ChunkData;
    return lf + 1;
  }

  private readChunkData(data: Buffer, at: number): number {
    const take = Math.min(this.remaining, data.length - at);
    this.events.onBody(data.subarray(at, at + take));
    this.remaining -= take;
    if (this.remaining === 0) {
      this.state = State.ChunkDataEnd;
      this.remaining = 2;
    }
    return at + take;
  }

  /** The CR LF after a chunk's data, possibly split across reads. */
  private readChunkDataEnd(data: Buffer, at: number): number {
    while (this.remaining > 0 && at < data.length) {
      const expected = this.remaining === 2 ? CR : LF;
      if (data[at] !== expected) throw new ResponseParseError('a chunk longer than its size');
      this.remaining--;
      at++;
    }
    if (this.remaining === 0) this.state = State.ChunkLine;
    return at;
  }

  /** Trailer lines up to an empty one; read and dropped (vendors send none). */
  private readTrailers(data: Buffer, at: number): number {
    while (at < data.length) {
      const lf = data.indexOf(LF, at);
      if (lf < 0) {
        this.keepPending(data, at, MAX_TRAILER_BYTES, 'the trailers');
        return data.length;
      }
      const line = this.takePending(data, at, lf, MAX_TRAILER_BYTES, 'the trailers');
      this.trailerBytes += line.length + 2;
      if (this.trailerBytes > MAX_TRAILER_BYTES) throw new ResponseParseError(`trailers over ${MAX_TRAILER_BYTES} bytes`);
      at = lf + 1;
      if (line === '') {
        this.finish();
        return at;
      }
    }
    return at;
  }

  private keepPending(data: Buffer, at: number, limit: number, what: string): void {
    const piece = data.subarray(at);
    this.pending = this.pending ? Buffer.concat([this.pending, piece]) : Buffer.from(piece);
    if (this.pending.length > limit) throw new ResponseParseError(`${what} over ${limit} bytes`);
  }

  /** The line ending at `lf` (CR LF required), with any bytes kept from earlier reads. */
  private takePending(data: Buffer, at: number, lf: number, limit: number, what: string): string {
    let line = data.toString('latin1', at, lf);
    if (this.pending) {
      line = this.pending.toString('latin1') + line;
      this.pending = null;
    }
    if (line.length > limit) throw new ResponseParseError(`${what} over ${limit} bytes`);
    if (!line.endsWith('\r')) throw new ResponseParseError(`a bare LF in ${what}`);
    return line.slice(0, -1);
  }

  private finish(): void {
    this.state = State.Done;
    this.events.onEnd();
  }
}

/** A header line's name, lower-cased; throws unless the line starts with a token and a colon. */
function headerName(head: string, start: number, end: number): string {
  let upper = false;
  let i = start;
  for (; i < end; i++) {
    const c = head.charCodeAt(i);
    if (c === 58) break; // ':'
    // A space or tab here is an obs-fold line or whitespace before the colon; a bare CR or LF, a
    // line ending other than CR LF: all refused, not guessed at.
    if (c > 127 || IS_TOKEN[c] === 0) throw new ResponseParseError(`the header line ${JSON.stringify(head.slice(start, Math.min(end, start + 64)))}`);
    if (c >= 65 && c <= 90) upper = true;
  }
  if (i === start || i === end) throw new ResponseParseError(`a header line without a name and colon: ${JSON.stringify(head.slice(start, Math.min(end, start + 64)))}`);
  const name = head.slice(start, i);
  return upper ? name.toLowerCase() : name;
}

/**
 * A header's value without surrounding spaces and tabs (RFC 9110 5.5; undici keeps trailing
 * ones, Node's server drops them as here); throws on a control character (CR, LF, NUL, ...). */
function headerValue(head: string, start: number, end: number): string {
  while (start < end && (head.charCodeAt(start) === 32 || head.charCodeAt(start) === 9)) start++;
  while (end > start && (head.charCodeAt(end - 1) === 32 || head.charCodeAt(end - 1) === 9)) end--;
  for (let i = start; i < end; i++) {
    const c = head.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127) throw new ResponseParseError(`a control character in a header value (${c})`);
  }
  return head.slice(start, end);
}

function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 32 || value.charCodeAt(start) === 9)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 32 || value.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** As undici's parseHeaders: a repeated name becomes an array of its values. */
function addHeader(headers: ResponseHeaders, name: string, value: string): void {
  if (!Object.hasOwn(headers, name)) {
    if (name === '__proto__') Object.defineProperty(headers, name, { value, enumerable: true, configurable: true, writable: true });
    else headers[name] = value;
    return;
  }
  const existing = headers[name]!;
  if (typeof existing === 'string') headers[name] = [existing, value];
  else existing.push(value);
}
