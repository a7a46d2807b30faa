// Reads an HTTP/1.1 request head from the bytes a connection has received, for the lean server
// (lean-server.ts). It accepts only the plain form that clients of an API send: anything else is
// `'handover'`, and Node's own HTTP server, which handles (or refuses) every form, takes the
// connection from that request on. So this reader never has to be lenient: it is strict and short.
//
// Accepted: `POST SP /origin-form SP HTTP/1.1 CRLF` (the lean server serves only POSTs; another
// method is handed over before its headers are read), then header lines `name: value CRLF` with
// token names, values of visible ASCII, obs-text, SP and HTAB, each name once, a Host header,
// Content-Length of digits only, and a blank line; at most MAX_HEADERS headers. Handed over: any
// other version, absolute or asterisk targets, bare LF, obs-fold, a repeated header,
// Transfer-Encoding, Expect, Upgrade (or `Connection: upgrade`), and a head longer than the limit
// (Node answers 431 for it). A repeated Content-Length or one with Transfer-Encoding is where
// request smuggling lives; handing those over leaves them to Node's parser.
import type { IncomingHttpHeaders } from 'node:http';

export interface RequestHead {
  url: string;
  /** Lower-case names; values as received (latin1), trimmed. No prototype: a name is only a name. */
  headers: IncomingHttpHeaders;
  /** Content-Length, 0 without one. */
  bodyLength: number;
  /** False when the client sent `Connection: close`. */
  keepAlive: boolean;
  /** Index just past the blank line that ends the head. */
  headEnd: number;
}

export type HeadReading = RequestHead | 'incomplete' | 'handover';

/** More headers than a client of an API sends; past it, Node's server takes the connection. */
export const MAX_HEADERS = 100;

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;
const SLASH = 0x2f;
const HEAD_END = Buffer.from('\r\n\r\n');
const METHOD = 'POST ';
const VERSION = 'HTTP/1.1';

/** RFC 9110 tchar: the bytes a header name may have. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;

/** Bytes a header value may have: HTAB, SP, visible ASCII, obs-text (no CR, LF, NUL, DEL, controls). */
const VALUE_BYTE = new Uint8Array(256);
VALUE_BYTE[HTAB] = 1;
for (let c = 0x20; c <= 0x7e; c++) VALUE_BYTE[c] = 1;
for (let c = 0x80; c <= 0xff; c++) VALUE_BYTE[c] = 1;

/**
 * The head at the start of `buf`: `'incomplete'` while its blank line has not arrived (and the
 * bytes so far could still be an accepted head), `'handover'` for anything this reader does not
 * accept, including a head longer than `maxHeadBytes`.
 */
export function readRequestHead(buf: Buffer, maxHeadBytes: number): HeadReading {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) return buf.length > maxHeadBytes || !startsAsPost(buf) || hasBareLf(buf) ? 'handover' : 'incomplete';
  const headEnd = end + 4;
  if (headEnd > maxHeadBytes) return 'handover';

  // Request line.
  if (buf.toString('latin1', 0, METHOD.length) !== METHOD) return 'handover';
  let i = METHOD.length;
  const targetStart = i;
  if (buf[i] !== SLASH) return 'handover';
  while (buf[i]! > SP && buf[i]! < 0x7f) i++;
  if (buf[i] !== SP) return 'handover';
  const url = buf.toString('latin1', targetStart, i);
  i++;
  if (buf.toString('latin1', i, i + VERSION.length) !== VERSION) return 'handover';
  i += VERSION.length;
  if (buf[i] !== CR || buf[i + 1] !== LF) return 'handover';
  i += 2;

  // Header lines, up to the blank line at `end`.
  const headers: IncomingHttpHeaders = Object.create(null) as IncomingHttpHeaders;
  let count = 0;
  let bodyLength = 0;
  let keepAlive = true;
  while (i < end + 2) {
    if (++count > MAX_HEADERS) return 'handover';
    const nameStart = i;
    while (TCHAR[buf[i]!] === 1) i++;
    if (i === nameStart || buf[i] !== COLON) return 'handover'; // also obs-fold: a line starting with SP
    const name = buf.toString('latin1', nameStart, i).toLowerCase();
    i++;
    while (buf[i] === SP || buf[i] === HTAB) i++;
    const valueStart = i;
    while (VALUE_BYTE[buf[i]!] === 1) i++;
    if (buf[i] !== CR || buf[i + 1] !== LF) return 'handover'; // a CR, LF or control inside the value
    let valueEnd = i;
    while (valueEnd > valueStart && (buf[valueEnd - 1] === SP || buf[valueEnd - 1] === HTAB)) valueEnd--;
    i += 2;
    if (headers[name] !== undefined) return 'handover';
    const value = buf.toString('latin1', valueStart, valueEnd);
    headers[name] = value;
    switch (name) {
      case 'content-length':
        if (!/^[0-9]{1,15}$/.test(value)) return 'handover';
        bodyLength = Number(value);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return 'handover';
      case 'connection': {
        const options = value.toLowerCase();
        if (options.includes('upgrade')) return 'handover';
        if (/(^|[\s,])close($|[\s,])/.test(options)) keepAlive = false;
        break;
      }
    }
  }
  if (headers.host === undefined) return 'handover'; // Node answers 400 (RFC 9112 3.2)
  return { url, headers, bodyLength, keepAlive, headEnd };
}

/** The first bytes could begin `POST ` (anything else goes to Node at once, with Node's timeouts). */
function startsAsPost(buf: Buffer): boolean {
  const n = Math.min(buf.length, METHOD.length);
  return buf.toString('latin1', 0, n) === METHOD.slice(0, n);
}

/** An LF not after a CR: a head Node may read (or refuse) but this reader never finishes. */
function hasBareLf(buf: Buffer): boolean {
  for (let at = buf.indexOf(LF); at >= 0; at = buf.indexOf(LF, at + 1)) {
    if (at === 0 || buf[at - 1] !== CR) return true;
  }
  return false;
}
