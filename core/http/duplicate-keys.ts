// A key written twice in one object of a request body: JSON.parse keeps the last value, another
// parser (an upstream's) may keep the first, so what Relay checked (an item's type, a file id) may
// not be what the upstream reads. The scan counts the members written (json-scan-wasm/); whatever
// Relay parses of a body is counted again as kept, and fewer kept than written is refused here.
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';

/** Object members JSON.parse kept in `value`, at any depth: one per distinct key of each object. */
export function keptMembers(value: unknown): number {
  let kept = 0;
  // Iterative: a value nested thousands deep must not overflow the stack.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (!Array.isArray(node)) kept += children.length;
    for (const child of children) if (child !== null && typeof child === 'object') stack.push(child);
  }
  return kept;
}

/** A JSON pointer's segment for `key` (RFC 6901). */
const segment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

interface Open {
  /** The object's keys so far; null for an array. */
  keys: Set<string> | null;
  pointer: string;
  /** An array's element being read, or an object's last key. */
  index: number;
  key: string;
}

/**
 * The first key written twice in one object of `text` (JSON that JSON.parse accepts), compared as
 * JSON.parse reads keys (escapes decoded), with the object's pointer under `at`; null when none.
 * Only a refusal reads this, so it may be slower than the count that found one.
 */
export function firstDuplicateKey(text: string, at: string): { key: string; pointer: string } | null {
  const stack: Open[] = [];
  // The last character that is not space outside strings: a string after `{` or `,` in an object is a key.
  let previous = '';
  const child = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return at;
    return `${top.pointer}/${top.keys ? segment(top.key) : top.index}`;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') continue;
    const top = stack[stack.length - 1];
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && (previous === '{' || previous === ',')) {
        const written = text.slice(i, end + 1);
        const key = written.includes('\\') ? JSON.parse(written) as string : written.slice(1, -1);
        if (top.keys.has(key)) return { key, pointer: top.pointer };
        top.keys.add(key);
        top.key = key;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      stack.push({ keys: c === '{' ? new Set() : null, pointer: child(), index: 0, key: '' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top && !top.keys) {
      top.index++;
    }
    previous = c;
  }
  return null;
}

/**
 * The 400 for `text` (the body, or the member at pointer `at`) when fewer members were kept than
 * written: which key, and in which object.
 */
export function duplicateKeyError(text: string, at: string): RelayError {
  const found = firstDuplicateKey(text, at);
  if (!found) return new RelayError('RELAY_ERR_BAD_REQUEST', 'a key appears more than once in one object of the request body', { field: at || '/' });
  const key = echoedName(found.key);
  const where = found.pointer === '' ? 'the request body' : `the object at ${echoedName(found.pointer)}`;
  return new RelayError('RELAY_ERR_BAD_REQUEST', `'${key}' appears more than once in ${where}`, { field: echoedName(`${found.pointer}/${segment(found.key)}`) });
}
