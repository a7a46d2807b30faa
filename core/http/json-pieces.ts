// JSON.parse of a body that the scanner accepted, without making its text one string. V8 gives
// every string over 128 KB pages of its own, mapped for it and unmapped when it dies, and on a
// Firecracker VM touching fresh pages is slow: the text of a 400 KB Codex turn took ~1.9 ms to
// make, against 0.7 ms to parse it (json-parts.ts is the same for writing; test/bench/json-parts.ts
// measures both: reading such a turn 2.3 -> 1.0 ms). A translated
// agent turn parses its request, so the text is made in pieces of at most PIECE_BYTES: the body
// is walked once to find where its values lie, any value that fits a piece is parsed whole by
// JSON.parse, and the containers around them are built here. A single string value bigger than a
// piece is still one string (the parsed value is that string anyway).
//
// Only for bytes the scanner accepted as JSON (json-scan.ts): the walk trusts their structure.
// What it builds equals JSON.parse(body.toString('utf8')), key order, duplicate keys and
// `__proto__` included (test/core/json-pieces.test.ts).

// Declared here, not imported: V8 does not fold a constant imported from another module into a
// hot loop (json-scan.ts).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/** At most 60 K bytes of UTF-8 make at most 60 K characters: 120 KB even as a two-byte string. */
export const PIECE_BYTES = 60 * 1024;

/** JSON.parse(body.toString('utf8')) for a body the scanner accepted, its text made in pieces. */
export function parseInPieces(body: Buffer, pieceBytes = PIECE_BYTES): unknown {
  if (body.length <= pieceBytes) return JSON.parse(body.toString('utf8'));
  const parser = new PieceParser(body, pieceBytes);
  const start = skipSpace(body, 0);
  const built = parser.walk(start);
  return built === WHOLE ? JSON.parse(body.toString('utf8', start, parser.end)) : built;
}

/** What walk() returns for a value that fits a piece, or is a scalar: its container parses it whole. */
const WHOLE = Symbol('whole');

class PieceParser {
  /** Past the value the last walk() read. */
  end = 0;
  /** For each member or item of the containers being walked: key start, key end, value start, value end. */
  private readonly spans: number[] = [];
  /** For each member or item: its value if it was built, WHOLE if it is to be parsed from its span. */
  private readonly values: unknown[] = [];

  constructor(private readonly b: Buffer, private readonly pieceBytes: number) {}

  walk(i: number): unknown {
    const c = this.b[i];
    if (c === OPEN_BRACE || c === OPEN_BRACKET) return this.container(i, c === OPEN_BRACE);
    this.end = c === QUOTE ? skipString(this.b, i) : skipScalar(this.b, i);
    return WHOLE;
  }

  private container(start: number, isObject: boolean): unknown {
    const b = this.b;
    const base = this.values.length;
    let i = skipSpace(b, start + 1);
    if (b[i] !== CLOSE_BRACE && b[i] !== CLOSE_BRACKET) {
      for (;;) {
        let keyStart = 0;
        let keyEnd = 0;
        if (isObject) {
          keyStart = i;
          keyEnd = skipString(b, i);
          i = skipSpace(b, skipSpace(b, keyEnd) + 1); // past the colon
        }
        const value = this.walk(i);
        this.spans.push(keyStart, keyEnd, i, this.end);
        this.values.push(value);
        i = skipSpace(b, this.end);
        if (b[i] !== COMMA) break; // the closing bracket
        i = skipSpace(b, i + 1);
      }
    }
    this.end = i + 1;
    if (this.end - start <= this.pieceBytes) {
      this.truncate(base);
      return WHOLE;
    }
    const built = isObject ? this.buildObject(base) : this.buildArray(base);
    this.truncate(base);
    return built;
  }

  private buildArray(base: number): unknown[] {
    const out: unknown[] = [];
    for (let n = base; n < this.values.length; n++) out.push(this.valueAt(n));
    return out;
  }

  private buildObject(base: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let n = base; n < this.values.length; n++) {
      const key = JSON.parse(this.b.toString('utf8', this.spans[4 * n]!, this.spans[4 * n + 1]!)) as string;
      const value = this.valueAt(n);
      // JSON.parse makes `__proto__` an own member; an assignment would set the prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }

  private valueAt(n: number): unknown {
    const value = this.values[n];
    return value === WHOLE ? JSON.parse(this.b.toString('utf8', this.spans[4 * n + 2]!, this.spans[4 * n + 3]!)) : value;
  }

  private truncate(base: number): void {
    this.values.length = base;
    this.spans.length = 4 * base;
  }
}

function skipSpace(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) return i;
    i++;
  }
}

/** Past a number, true, false or null: up to the next delimiter. */
function skipScalar(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c === undefined || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === SPACE || c === LF || c === CR || c === TAB) return i;
    i++;
  }
}

/** Past the string whose opening quote is at i. Short strings byte by byte; long ones by indexOf. */
function skipString(b: Buffer, i: number): number {
  let j = i + 1;
  for (const stop = j + 32; j < stop; j++) {
    const c = b[j];
    if (c === QUOTE) return j + 1;
    if (c === BACKSLASH) j++;
  }
  for (;;) {
    const quote = b.indexOf(QUOTE, j);
    let backslashes = 0;
    for (let k = quote - 1; b[k] === BACKSLASH; k--) backslashes++;
    if ((backslashes & 1) === 0) return quote + 1;
    j = quote + 1;
  }
}
