// The query of a web search whose streamed input JSON was cut short (the stream ended or failed
// mid-input): it stands when its string is whole up to its closing quote; a query cut inside its
// string is not guessed at (a prefix of a query is not what was searched for).

const SPACE = /[ \t\n\r]/;

/** The top-level "query" string member of a cut JSON object, or undefined when it is not whole. */
export function queryOfPartialInput(json: string): string | undefined {
  let at = skipSpace(json, 0);
  if (json[at] !== '{') return undefined;
  at += 1;
  for (;;) {
    at = skipSpace(json, at);
    if (json[at] === ',') at = skipSpace(json, at + 1);
    const key = readString(json, at);
    if (key === null) return undefined;
    at = skipSpace(json, key.end);
    if (json[at] !== ':') return undefined;
    at = skipSpace(json, at + 1);
    if (json[at] === '"') {
      const value = readString(json, at);
      if (value === null) return undefined;
      if (key.text === 'query') return value.text;
      at = value.end;
    } else {
      const end = skipValue(json, at);
      if (end === null) return undefined;
      at = end;
    }
    at = skipSpace(json, at);
    if (json[at] !== ',') return undefined; // the object ended (or broke) without a whole query
  }
}

function skipSpace(json: string, at: number): number {
  while (at < json.length && SPACE.test(json[at])) at += 1;
  return at;
}

/** The JSON string starting at `at` (its quote) and where it ends; null when it is cut or not one. */
function readString(json: string, at: number): { text: string; end: number } | null {
  if (json[at] !== '"') return null;
  for (let i = at + 1; i < json.length; i += 1) {
    if (json[i] === '\\') i += 1;
    else if (json[i] === '"') {
      try {
        return { text: JSON.parse(json.slice(at, i + 1)) as string, end: i + 1 };
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** Where a non-string value starting at `at` ends (the `,` or `}` after it); null when it is cut. */
function skipValue(json: string, at: number): number | null {
  let depth = 0;
  let inString = false;
  for (let i = at; i < json.length; i += 1) {
    const c = json[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      depth -= 1;
    } else if (c === ',' && depth === 0) return i;
  }
  return null;
}
