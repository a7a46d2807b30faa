// The one frame that makes up most of an Anthropic stream, read without JSON.parse:
//   {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
// exactly as Anthropic writes it, when its text has no escapes. Anything else (another frame,
// another key order, whitespace, an escaped character) returns null and is parsed as JSON.
// JSON.parse of each frame was the largest cost of a translated Anthropic stream (test/bench/RESULTS.md).

const PREFIX = '{"type":"content_block_delta","index":';
const MIDDLE = ',"delta":{"type":"text_delta","text":"';
const SUFFIX = '"}}';
/** Longest index read here (larger ones go to JSON.parse). */
const MAX_INDEX_DIGITS = 9;

export interface TextDelta {
  index: number;
  text: string;
}

/** The index and text of a plain text-delta frame, or null when the frame must be parsed as JSON. */
export function plainTextDelta(data: string): TextDelta | null {
  if (!data.startsWith(PREFIX) || !data.endsWith(SUFFIX)) return null;
  const digitsStart = PREFIX.length;
  let i = digitsStart;
  let index = 0;
  for (; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    index = index * 10 + (c - 0x30);
  }
  const digits = i - digitsStart;
  // JSON has no leading zeros: "01" is not a number, and JSON.parse would refuse the frame.
  if (digits === 0 || digits > MAX_INDEX_DIGITS || (digits > 1 && data.charCodeAt(digitsStart) === 0x30)) return null;
  if (!data.startsWith(MIDDLE, i)) return null;
  const textStart = i + MIDDLE.length;
  const textEnd = data.length - SUFFIX.length;
  if (textEnd < textStart) return null;
  for (let k = textStart; k < textEnd; k++) {
    const c = data.charCodeAt(k);
    // A quote or backslash (an escape, or the string ending early) or a control character
    // (not allowed in a JSON string): left to JSON.parse.
    if (c === 0x22 || c === 0x5c || c < 0x20) return null;
  }
  return { index, text: data.slice(textStart, textEnd) };
}
