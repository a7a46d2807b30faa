// Checks a request body as JSON without building it, and finds where chosen top-level members'
// values lie: what an inference endpoint needs on passthrough, where the body is forwarded as
// received and only `model` and `stream` are read. Agents send big bodies (a coding agent's turn
// carries its whole conversation, hundreds of KB), and JSON.parse(body.toString()) builds every
// string and object in them, which the request then holds until its answer ends. Measured
// (test/bench/json-scan.ts): a 394 KB Claude Code turn took 1.67 ms to parse and its parsed copy
// held 391 KB of heap; the scan takes 0.75 ms and holds nothing. bench:compare on the bench's
// agent-turn-stream case: 1.585x the throughput of the build that parsed.
//
// It accepts exactly what JSON.parse(body.toString('utf8')) accepts (RFC 8259: no BOM, no trailing
// commas, no comments; bytes past 0x7f only inside strings, where UTF-8 is not checked, as
// toString replaces bad sequences instead of refusing them). On anything else it answers null and
// says nothing of why: the caller runs JSON.parse for the error message, off the happy path.
//
// Where WebAssembly runs, requests are scanned by json-scan-wasm/ instead: the same rules, strings
// read sixteen bytes at a time (2.5x faster on agent-sized bodies). This scanner is its fallback
// (`node --jitless`), and test/core/json-scan.test.ts holds both to the same cases.

import type { BodyBytes } from './body-bytes.ts';

// Declared here, not shared with json-top-level.ts: V8 does not fold a constant imported from
// another module into a hot loop (imported, they took the scan of a 1 MB body from 1.4 to 3.0 ms).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;

/** Bytes that end a run of plain string content: `"`, `\` and the control characters. */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOP[c] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** What may follow a backslash, but `u`: " \ / b f n r t. */
const SHORT_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SHORT_ESCAPE[c.charCodeAt(0)] = 1;

const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number): boolean => c >= ZERO && c <= 0x39;

/** Where a top-level member's value lies: `start` at its first byte, `end` just past its last. */
export interface ValueSpan {
  start: number;
  end: number;
}

/** What json-scan-wasm/wasm-scanner.ts and TopLevelScanner both do. */
export interface MemberScanner {
  /**
   * When `body` is valid JSON and an object: the span of each key's value in the outermost object
   * (the last one when a key is written twice, as JSON.parse keeps the last), or null for a key it
   * lacks. Null when the body is not valid JSON or not an object.
   */
  scan(body: Buffer): Array<ValueSpan | null> | null;
  /**
   * The same for a body in parts; the spans index `whole`, the body as one Buffer, which stays
   * as it is only until the next scan.
   */
  scanBody(body: BodyBytes): BodyScan | null;
}

export interface BodyScan {
  spans: Array<ValueSpan | null>;
  whole: Buffer;
}

/** Nesting depth whose stack a scanner keeps between scans. */
const MAX_KEPT_STACK = 4096;

/** Container kinds on the scan's stack. */
const IN_OBJECT = 1;
const IN_ARRAY = 2;

/**
 * Scans bodies as JSON documents for the values of `keys` in the outermost object. Made once per
 * set of keys (it keeps them as bytes); not re-entrant, so one per caller that scans.
 */
export class TopLevelScanner implements MemberScanner {
  private readonly wanted: Buffer[];
  private stack = new Uint8Array(64);
  /** The member of the outermost object being read: which of the keys it is (-1: none), and where its value starts. */
  private member = -1;
  private memberStart = 0;

  constructor(private readonly keys: readonly string[]) {
    this.wanted = keys.map((k) => Buffer.from(JSON.stringify(k)));
  }

  scanBody(body: BodyBytes): BodyScan | null {
    const whole = body.joined();
    const spans = this.scan(whole);
    return spans && { spans, whole };
  }

  scan(body: Buffer): Array<ValueSpan | null> | null {
    const found: Array<ValueSpan | null> = this.keys.map(() => null);
    const n = body.length;
    const view = new DataView(body.buffer, body.byteOffset, n);
    let stack = this.stack;
    let depth = 0;
    let i = skipSpace(body, 0);
    if (body[i] !== OPEN_BRACE) return null;
    this.member = -1;

    // Each turn reads one value at i, then the separators after it, up to the next value.
    for (;;) {
      const c = body[i];
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (depth === stack.length) {
          const grown = new Uint8Array(depth * 2);
          grown.set(stack);
          stack = grown;
          // Kept for the next scan only while small: one deeply nested body must not pin its
          // stack (up to the body limit) for the life of the process.
          if (grown.length <= MAX_KEPT_STACK) this.stack = grown;
        }
        stack[depth++] = c === OPEN_BRACE ? IN_OBJECT : IN_ARRAY;
        i = skipSpace(body, i + 1);
        if (body[i] === (c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
          depth--;
          i++;
        } else if (c === OPEN_BRACE) {
          i = this.readKey(body, view, i, depth);
          if (i < 0) return null;
          continue;
        } else {
          continue; // the array's first value
        }
      } else if (c === QUOTE) {
        i = skipString(body, view, i + 1);
        if (i < 0) return null;
      } else if (c === MINUS || (c !== undefined && isDigit(c))) {
        i = skipNumber(body, i);
        if (i < 0) return null;
      } else if (c === 0x74 /* t */) {
        if (body[i + 1] !== 0x72 || body[i + 2] !== 0x75 || body[i + 3] !== 0x65) return null;
        i += 4;
      } else if (c === 0x66 /* f */) {
        if (body[i + 1] !== 0x61 || body[i + 2] !== 0x6c || body[i + 3] !== 0x73 || body[i + 4] !== 0x65) return null;
        i += 5;
      } else if (c === 0x6e /* n */) {
        if (body[i + 1] !== 0x75 || body[i + 2] !== 0x6c || body[i + 3] !== 0x6c) return null;
        i += 4;
      } else {
        return null;
      }

      // A value ended at i: close what it ends, up to the next value.
      for (;;) {
        if (depth === 1 && this.member >= 0) {
          found[this.member] = { start: this.memberStart, end: i };
          this.member = -1;
        }
        i = skipSpace(body, i);
        if (depth === 0) return i === n ? found : null;
        const sep = body[i];
        const inObject = stack[depth - 1] === IN_OBJECT;
        if (sep === COMMA) {
          i = skipSpace(body, i + 1);
          if (inObject) {
            i = this.readKey(body, view, i, depth);
            if (i < 0) return null;
          }
          break;
        }
        if (sep !== (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) return null;
        depth--;
        i++;
      }
    }
  }

  /** Reads `"key" :` at `at` and the space after; notes the member when it is one of the keys at depth 1. -1 when malformed. */
  private readKey(b: Buffer, view: DataView, at: number, depth: number): number {
    if (b[at] !== QUOTE) return -1;
    const end = skipString(b, view, at + 1);
    if (end < 0) return -1;
    let j = skipSpace(b, end);
    if (b[j] !== COLON) return -1;
    j = skipSpace(b, j + 1);
    if (depth === 1) {
      this.member = this.keyIndex(b, at, end);
      this.memberStart = j;
    }
    return j;
  }

  private keyIndex(b: Buffer, start: number, end: number): number {
    return memberKeyIndex(this.keys, this.wanted, b, start, end);
  }
}

/**
 * Which of `keys` the JSON string at b[start..end) (quotes included) is, -1 for none. `wanted` is
 * each key as JSON text (with its quotes), compared byte for byte before anything is decoded.
 */
export function memberKeyIndex(keys: readonly string[], wanted: readonly Buffer[], b: Buffer, start: number, end: number): number {
  for (let k = 0; k < wanted.length; k++) {
    const w = wanted[k]!;
    if (w.length === end - start && b.compare(w, 0, w.length, start, end) === 0) return k;
  }
  // A key written with escapes (`"mod\u0065l"`) is the same key to JSON.parse.
  for (let p = start; p < end; p++) {
    if (b[p] === BACKSLASH) return keys.indexOf(JSON.parse(b.toString('utf8', start, end)) as string);
  }
  return -1;
}

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length && isSpace(b[i]!)) i++;
  return i;
}

/**
 * 0x80 in each of the four bytes of `x` that is `"`, `\` or a control character, 0 in the others
 * (bytes past 0x7f among them). `((y & 0x7f) + 0x7f) | y` has its top bit clear exactly where y's
 * byte is 0, with no carry between bytes; y is x against `"`, against `\`, and x's top three bits.
 */
function stopBytes(x: number): number {
  const quote = x ^ 0x22222222;
  const backslash = x ^ 0x5c5c5c5c;
  const control = x & 0xe0e0e0e0;
  return ~((((quote & 0x7f7f7f7f) + 0x7f7f7f7f) | quote)
    & (((backslash & 0x7f7f7f7f) + 0x7f7f7f7f) | backslash)
    & (((control & 0x7f7f7f7f) + 0x7f7f7f7f) | control)) & 0x80808080;
}

/**
 * From just past an opening quote to just past the closing one; -1 when the string is malformed or
 * unterminated. `view` is a DataView on `b`'s bytes, made once per scan.
 */
function skipString(b: Buffer, view: DataView, i: number): number {
  const n = b.length;
  const lastWord = n - 4;
  for (;;) {
    // Four bytes a turn, read as one number and checked at once, then straight to the byte that
    // stopped the run. Against a lookup table per byte (eight bytes a turn), the scan of a 394 KB
    // Claude Code turn took 0.87-0.92 -> 0.55-0.59 ms, of a 978 KB one 2.1-2.5 -> 1.25-1.66 ms
    // (the two side by side in one process, two runs; test/bench/json-scan.ts has the bodies).
    let stop = 0;
    while (i <= lastWord) {
      stop = stopBytes(view.getInt32(i, true));
      if (stop !== 0) break;
      i += 4;
    }
    // Little-endian: the lowest set bit is the first byte that stops the run.
    if (stop !== 0) i += (31 - Math.clz32(stop & -stop)) >> 3;
    else while (i < n && STRING_STOP[b[i]!] === 0) i++;
    if (i >= n) return -1;
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH) return -1; // a control character
    const e = b[i + 1];
    if (e === 0x75 /* u */) {
      if (HEX[b[i + 2]!] !== 1 || HEX[b[i + 3]!] !== 1 || HEX[b[i + 4]!] !== 1 || HEX[b[i + 5]!] !== 1) return -1;
      i += 6;
    } else if (e !== undefined && SHORT_ESCAPE[e] === 1) {
      i += 2;
    } else {
      return -1;
    }
  }
}

/** A number as RFC 8259 writes it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; -1 when malformed. */
function skipNumber(b: Buffer, i: number): number {
  if (b[i] === MINUS) i++;
  if (b[i] === ZERO) {
    i++;
  } else {
    if (!isDigit(b[i] ?? 0)) return -1;
    while (isDigit(b[i] ?? 0)) i++;
  }
  if (b[i] === DOT) {
    i++;
    if (!isDigit(b[i] ?? 0)) return -1;
    while (isDigit(b[i] ?? 0)) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === MINUS) i++;
    if (!isDigit(b[i] ?? 0)) return -1;
    while (isDigit(b[i] ?? 0)) i++;
  }
  return i;
}
