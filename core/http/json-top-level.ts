// One top-level member of a JSON object body, read without parsing the rest: how passthrough
// reads usage from a non-streamed answer. JSON.parse of a whole 1536-dimension embeddings answer
// (30 KB) takes ~100 us, more than the rest of the request; finding and parsing its usage takes ~1.
//
// The key is looked for from the end (usage comes last or nearly), and trusted only when it is a
// member of the outermost object: the bytes after it are walked back from the end, strings
// skipped, and must close exactly one level. Anything else (the key not written plainly, a nested
// key of the same name, a value that is not an object or null) answers `undefined`, and the caller
// parses the whole body as before.
//
// Only the bytes from the member to the end are read, so it works on a body's tail too (a long
// answer of which passthrough keeps only the end; see usage-copy.ts).
//
// topLevelValueSpan and replaceTopLevelValue go the other way, for a request body: they walk the
// whole top level from the start (nested values skipped, strings skipped with indexOf) so that
// passthrough can rename the model in the client's bytes and leave every other byte as it came.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * `{ value }` when `key` is a member of the outermost object of `body` and its value is an object
 * or null; `undefined` when that cannot be told cheaply.
 */
export function topLevelMember(body: Buffer, key: string, options: { isTail?: boolean } = {}): { value: unknown } | undefined {
  const needle = `"${key}":`;
  const at = body.lastIndexOf(needle);
  if (at < 0) return undefined;
  const slashes = backslashesBefore(body, at);
  // In a tail (`isTail`: the body's last bytes only), backslashes reaching its start may continue
  // before it, so whether the quote is escaped cannot be told.
  if (slashes % 2 === 1 || (options.isTail && slashes === at)) return undefined;
  let start = at + Buffer.byteLength(needle);
  while (start < body.length && isSpace(body[start]!)) start++;
  const end = body[start] === OPEN_BRACE ? objectEnd(body, start) : isNull(body, start) ? start + 4 : -1;
  if (end < 0 || depthAfter(body, end) !== 1) return undefined;
  try {
    return { value: JSON.parse(body.toString('utf8', start, end)) };
  } catch {
    return undefined;
  }
}

/**
 * Where the value of `key` lies in the outermost object of `body`: `start` at its first byte, `end`
 * just past its last. `undefined` when the key is not a top-level member, when it is one more than
 * once (JSON.parse keeps the last, a splice would change the first), or when the walk finds the
 * top level malformed. Inside nested values only strings and brackets are followed, so a malformed
 * nested value may go unnoticed: callers pass bodies JSON.parse has already accepted.
 */
export function topLevelValueSpan(body: Buffer, key: string): { start: number; end: number } | undefined {
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(body, i + 1);
  let found: { start: number; end: number } | undefined;
  if (body[i] !== CLOSE_BRACE) {
    for (;;) {
      if (body[i] !== QUOTE) return undefined;
      const nameEnd = stringEnd(body, i);
      if (nameEnd < 0) return undefined;
      const named = isName(body, i, nameEnd + 1, key);
      if (named === null) return undefined;
      i = skipSpace(body, nameEnd + 1);
      if (body[i] !== COLON) return undefined;
      const start = skipSpace(body, i + 1);
      const end = valueEnd(body, start);
      if (end < 0) return undefined;
      if (named) {
        if (found) return undefined;
        found = { start, end };
      }
      i = skipSpace(body, end);
      if (body[i] === CLOSE_BRACE) break;
      if (body[i] !== COMMA) return undefined;
      i = skipSpace(body, i + 1);
    }
  }
  // Nothing but whitespace may follow the object.
  return skipSpace(body, i + 1) === body.length ? found : undefined;
}

/**
 * `body` with the value of its top-level member `key` replaced by `json` (already serialised) and
 * every other byte kept; `undefined` when topLevelValueSpan cannot place the member.
 */
export function replaceTopLevelValue(body: Buffer, key: string, json: string): Buffer | undefined {
  const span = topLevelValueSpan(body, key);
  if (!span) return undefined;
  return Buffer.concat([body.subarray(0, span.start), Buffer.from(json), body.subarray(span.end)]);
}

/** Whether the string from `open` to `end` (quotes included) names `key`; null if it is not valid JSON. */
function isName(body: Buffer, open: number, end: number, key: string): boolean | null {
  // A name written with escapes (`"mod\u0065l"`) is decoded as JSON.parse would; others compare as text.
  if (!body.subarray(open, end).includes(BACKSLASH)) return body.toString('utf8', open + 1, end - 1) === key;
  try {
    return JSON.parse(body.toString('utf8', open, end)) === key;
  } catch {
    return null;
  }
}

/** The index just past the value that starts at `start`, or -1. */
function valueEnd(body: Buffer, start: number): number {
  const c = body[start];
  if (c === QUOTE) {
    const close = stringEnd(body, start);
    return close < 0 ? -1 : close + 1;
  }
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return objectEnd(body, start);
  // A number or a literal: up to the next delimiter.
  let i = start;
  while (i < body.length && body[i] !== COMMA && body[i] !== CLOSE_BRACE && body[i] !== CLOSE_BRACKET && !isSpace(body[i]!)) i++;
  return i > start ? i : -1;
}

function skipSpace(body: Buffer, from: number): number {
  let i = from;
  while (i < body.length && isSpace(body[i]!)) i++;
  return i;
}

/** The index just past the object (or array) that opens at `start`, or -1. */
function objectEnd(body: Buffer, start: number): number {
  let depth = 0;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (c === QUOTE) {
      i = stringEnd(body, i);
      if (i < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The index of the quote that closes the string opening at `open`, or -1. */
function stringEnd(body: Buffer, open: number): number {
  // indexOf finds the next quote natively; long strings (message texts) are most of a request.
  for (let i = body.indexOf(QUOTE, open + 1); i >= 0; i = body.indexOf(QUOTE, i + 1)) {
    if (!escaped(body, i)) return i;
  }
  return -1;
}

/** How many containers the bytes from `from` to the end close (walking back, strings skipped); -1 if unbalanced. */
function depthAfter(body: Buffer, from: number): number {
  let depth = 0;
  for (let i = body.length - 1; i >= from; i--) {
    const c = body[i];
    if (c === QUOTE) {
      // Back to the quote that opens this string: the first one not escaped.
      do i--; while (i >= from && (body[i] !== QUOTE || escaped(body, i)));
      if (i < from) return -1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth++;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth--;
    }
  }
  return depth;
}

/** True when the quote at `at` is preceded by an odd number of backslashes. */
function escaped(body: Buffer, at: number): boolean {
  return backslashesBefore(body, at) % 2 === 1;
}

function backslashesBefore(body: Buffer, at: number): number {
  let n = 0;
  for (let i = at - 1; i >= 0 && body[i] === BACKSLASH; i--) n++;
  return n;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isNull(body: Buffer, at: number): boolean {
  return body[at] === 0x6e && body[at + 1] === 0x75 && body[at + 2] === 0x6c && body[at + 3] === 0x6c;
}
