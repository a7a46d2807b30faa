// The copy of a non-streamed answer that passthrough keeps to read usage from once it has been
// sent. Vendors write `usage` near the end of an answer, so it is looked for there first and only
// it and the members after it are parsed (a 1536-dimension embedding is ~30 KB of numbers to parse
// otherwise; Chat's `service_tier` follows `usage`); an adapter that reads any other member gets
// the whole answer parsed. An answer up to WHOLE_COPY_BYTES is kept whole; of a larger one (a batch
// of embeddings runs to tens of MB) only the last TAIL_BYTES are kept, so that concurrent large
// answers cannot hold hundreds of MB each, and its usage is read from there or not at all.
import type { Usage } from '../canonical/types.ts';
import type { ShapeId, VendorAdapter } from '../hooks.ts';

export const WHOLE_COPY_BYTES = 8 * 1024 * 1024;
/** What is kept of a larger answer: its end, where `usage` and the few members after it are. */
export const TAIL_BYTES = 1024 * 1024;

const USAGE_KEY = Buffer.from('"usage"');
/** `"usage"` keys tried from the end (nested ones in the last members are passed over) before parsing whole. */
const TAIL_TRIES = 4;
const BACKSLASH = 0x5c;

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
  /** The bytes in `chunks`. */
  private kept = 0;
  private total = 0;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.kept += chunk.length;
    this.total += chunk.length;
    if (this.total <= WHOLE_COPY_BYTES) return;
    // Past the whole-copy bound: drop whole chunks from the front while the rest still covers the tail.
    let drop = 0;
    while (drop < this.chunks.length - 1 && this.kept - this.chunks[drop]!.length >= TAIL_BYTES) this.kept -= this.chunks[drop++]!.length;
    if (drop > 0) this.chunks = this.chunks.slice(drop);
  }

  /** The bytes the copy holds now. */
  get heldBytes(): number {
    return this.kept;
  }

  /** Whether the copy holds the whole answer (else only its end). */
  get whole(): boolean {
    return this.total <= WHOLE_COPY_BYTES;
  }

  usage(adapter: VendorAdapter, shape: ShapeId): Usage | null {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.kept);
    try {
      const whole = () => (this.whole ? JSON.parse(body.toString('utf8')) : {}) as Record<PropertyKey, unknown>;
      const tail = usageFromTail(body);
      if (tail) return adapter.usageFromBody(shape, answerWithUsage(tail.members, whole));
      return this.whole ? adapter.usageFromBody(shape, whole()) : null;
    } catch {
      return null; // not JSON: no usage to read
    }
  }
}
