// The copy of a non-streamed answer that passthrough keeps to read usage from once it has been
// sent. Vendors write `usage` near the end of an answer, so it is looked for there first and only
// it and the members after it are parsed (a 1536-dimension embedding is ~30 KB of numbers to parse
// otherwise; Chat's `service_tier` follows `usage`); an adapter that reads any other member gets
// the whole answer parsed. Without `usage` near the end, an answer up to WHOLE_PARSE_BYTES is
// parsed whole; a larger one (a batch of embeddings runs to tens of MB) has only its top-level
// `usage` member read, through the request scanner, so that reading a bill never builds tens of
// MB of objects.
import type { Usage } from '../canonical/types.ts';
import type { ShapeId, VendorAdapter } from '../hooks.ts';
import { TopLevelMembers } from '../http/json-scan-wasm/wasm-scanner.ts';

export const WHOLE_PARSE_BYTES = 8 * 1024 * 1024;
/** Past this, the copy is dropped and usage is not read (the answer still reaches the client whole). */
export const MAX_COPY_BYTES = 256 * 1024 * 1024;

const USAGE_KEY = Buffer.from('"usage"');
/** `"usage"` keys tried from the end (nested ones in the last members are passed over) before parsing whole. */
const TAIL_TRIES = 4;
const BACKSLASH = 0x5c;

let usageMember: TopLevelMembers | undefined;

/**
 * The outermost object's `usage` member, from the last such key on: `{` and the text from that key
 * to the end parse as an object only when the key is a member of the outermost object (a nested
 * key leaves its containers' closing brackets unmatched). The last one wins, as with JSON.parse.
 * `members` holds it and the outermost members after it, whose values no earlier key overrides.
 */
export function usageFromTail(body: Buffer): { value: unknown; members: Record<string, unknown> } | null {
  let at = body.length;
  for (let tries = 0; tries < TAIL_TRIES; tries++) {
    at = body.lastIndexOf(USAGE_KEY, at - 1);
    if (at <= 0) return null;
    if (escapedQuote(body, at)) continue;
    try {
      const tail = JSON.parse(`{${body.toString('utf8', at)}`) as { usage: unknown };
      return { value: tail.usage, members: tail };
    } catch {
      // Not a member of the outermost object: an earlier key may be.
    }
  }
  return null;
}

/** Whether the quote at `at` is escaped (inside a string), i.e. preceded by an odd run of backslashes. */
function escapedQuote(body: Buffer, at: number): boolean {
  let p = at - 1;
  while (p >= 0 && body[p] === BACKSLASH) p--;
  return (at - 1 - p) % 2 === 1;
}

/** The answer as usageFromBody sees it: `usage` and the members after it already read; any other member parses the whole answer. */
function answerWithUsage(read: Record<string, unknown>, whole: () => Record<PropertyKey, unknown>): object {
  let parsed: Record<PropertyKey, unknown> | undefined;
  const all = () => (parsed ??= whole());
  const known = (key: PropertyKey) => typeof key === 'string' && Object.hasOwn(read, key);
  return new Proxy({}, {
    get: (_target, key) => (known(key) ? read[key as string] : all()[key]),
    has: (_target, key) => known(key) || key in all(),
    ownKeys: () => Reflect.ownKeys(all()),
    getOwnPropertyDescriptor: (_target, key) => {
      const found = Reflect.getOwnPropertyDescriptor(all(), key);
      return found && { ...found, configurable: true };
    },
  });
}

export class UsageCopy {
  private chunks: Buffer[] = [];
  private bytes = 0;

  add(chunk: Buffer): void {
    if (this.bytes > MAX_COPY_BYTES) return;
    this.bytes += chunk.length;
    if (this.bytes > MAX_COPY_BYTES) this.chunks = [];
    else this.chunks.push(chunk);
  }

  usage(adapter: VendorAdapter, shape: ShapeId): Usage | null {
    if (this.bytes > MAX_COPY_BYTES) return null;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    try {
      const small = body.length <= WHOLE_PARSE_BYTES;
      const whole = () => (small ? JSON.parse(body.toString('utf8')) : topLevelUsage(body)) as Record<PropertyKey, unknown> | null;
      const tail = usageFromTail(body);
      if (tail) return adapter.usageFromBody(shape, answerWithUsage(tail.members, () => whole() ?? {}));
      const parsed = whole();
      return parsed === null ? null : adapter.usageFromBody(shape, parsed);
    } catch {
      return null; // not JSON: no usage to read
    }
  }
}

/** A large answer's top-level `usage` alone, read through the request scanner; null when it has none. */
function topLevelUsage(body: Buffer): { usage: unknown } | null {
  usageMember ??= new TopLevelMembers(['usage']);
  const span = usageMember.scan(body)?.spans[0];
  return span ? { usage: JSON.parse(body.toString('utf8', span.start, span.end)) } : null;
}
