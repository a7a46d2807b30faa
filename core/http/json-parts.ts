// JSON.stringify(value) as UTF-8 parts of about 32 K characters each, never as one string. A
// translated agent turn is a ~400 KB upstream request, and V8 puts any string over 128 KB in a
// space of its own, mapped for it alone and unmapped when it dies: fresh pages, faulted in every
// time. Measured on a Firecracker VM: making a 130 KB string took ~1 ms against 16 µs for a 120 KB
// one; JSON.stringify of a 335 KB request then Buffer.from of it 3.0 ms, these parts of the same
// bytes 0.9 ms (test/bench/json-parts.ts). Containers near the top are written member by member;
// below SPLIT_DEPTH, and for anything with toJSON, JSON.stringify writes the value whole.
import { BodyBytes } from './body-bytes.ts';

// In characters: a join stays under 2 x 32 K characters, under 128 KB even as a two-byte string.
const PART_CHARS = 32 * 1024;
/** Top-level object, its arrays (messages, tools), their items, the items' arrays (content blocks). */
const SPLIT_DEPTH = 4;

export function stringifyToParts(value: unknown): BodyBytes {
  const writer = new PartsWriter();
  if (splits(value, 0)) {
    writeValue(writer, value, '', 0);
  } else {
    const text = wholeText(value, '');
    if (text === undefined) throw new TypeError('stringifyToParts: the value has no JSON text (undefined, a function, a symbol)');
    writer.add(text);
  }
  return writer.finish();
}

class PartsWriter {
  private readonly parts: Buffer[] = [];
  private pending: string[] = [];
  private pendingLength = 0;
  private length = 0;

  add(text: string): void {
    if (text.length >= PART_CHARS) {
      // Already one string: written as its own part rather than joined into a bigger one.
      this.flush();
      this.push(Buffer.from(text));
      return;
    }
    this.pending.push(text);
    this.pendingLength += text.length;
    if (this.pendingLength >= PART_CHARS) this.flush();
  }

  finish(): BodyBytes {
    this.flush();
    return new BodyBytes(this.parts, this.length);
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.push(Buffer.from(this.pending.join('')));
    this.pending = [];
    this.pendingLength = 0;
  }

  private push(part: Buffer): void {
    this.parts.push(part);
    this.length += part.length;
  }
}

/** Whether `value` is written member by member (a plain container near the top) or by JSON.stringify whole. */
function splits(value: unknown, depth: number): value is object {
  return depth < SPLIT_DEPTH && value !== null && typeof value === 'object'
    && typeof (value as { toJSON?: unknown }).toJSON !== 'function' && !isBoxed(value);
}

/** Writes `value` as JSON.stringify writes it under `key` (what it leaves out is null: only an array's item can be). */
function writeValue(writer: PartsWriter, value: unknown, key: string, depth: number): void {
  if (!splits(value, depth)) {
    writer.add(wholeText(value, key) ?? 'null'); // in an array, what JSON.stringify leaves out is null
    return;
  }
  if (Array.isArray(value)) {
    writer.add('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) writer.add(',');
      writeValue(writer, value[i], String(i), depth + 1);
    }
    writer.add(']');
    return;
  }
  writer.add('{');
  let first = true;
  for (const name of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[name];
    // A member JSON.stringify leaves out (undefined, a function, a symbol, a toJSON giving undefined) is left out.
    const whole = splits(member, depth + 1) ? null : wholeText(member, name);
    if (whole === undefined) continue;
    writer.add(first ? `${JSON.stringify(name)}:` : `,${JSON.stringify(name)}:`);
    first = false;
    if (whole === null) writeValue(writer, member, name, depth + 1);
    else writer.add(whole);
  }
  writer.add('}');
}

/** JSON.stringify's text for `value` under `key`; undefined where it leaves the value out. */
function wholeText(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON !== 'function') return JSON.stringify(value);
  // toJSON is called with the key the value is under (a Date ignores it): through a holder.
  const held = JSON.stringify({ [key]: value });
  return held === '{}' ? undefined : held.slice(JSON.stringify(key).length + 2, -1);
}

/** new Number(1), new String('a'), new Boolean(true): JSON.stringify writes their primitive. */
function isBoxed(value: object): boolean {
  return value instanceof Number || value instanceof String || value instanceof Boolean;
}
