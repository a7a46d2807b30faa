// The copy of a non-streamed answer that passthrough keeps to read usage from once it has been
// sent. Vendors write `usage` near the end of an answer, so it is looked for there first and only
// it and the members after it are parsed (a 1536-dimension embedding is ~30 KB of numbers to parse
// otherwise; Chat's `service_tier` follows `usage`); an adapter that reads any other member gets
// the whole answer parsed. An answer up to WHOLE_COPY_BYTES is kept whole; of a larger one (a batch
// of embeddings runs to tens of MB) only its first HEAD_BYTES and last TAIL_BYTES are kept, so that
// concurrent large answers cannot hold hundreds of MB each, and its usage is read from there (the
// tail first) or not at all.
import type { Usage } from '../canonical/types.ts';
import type { ShapeId, VendorAdapter } from '../hooks.ts';
import { TopLevelMembers } from '../http/json-scan-wasm/wasm-scanner.ts';

export const WHOLE_COPY_BYTES = 8 * 1024 * 1024;
/** What is kept of a larger answer: its end, where `usage` and the few members after it are. */
export const TAIL_BYTES = 1024 * 1024;
/** And its start, for an upstream that writes `usage` first. */
export const HEAD_BYTES = 64 * 1024;

const USAGE_KEY = Buffer.from('"usage"');
/** `"usage"` keys tried from the end (nested ones in the last members are passed over) before parsing whole. */
const TAIL_TRIES = 4;
const BACKSLASH = 0x5c;
const MEMBER_START = Buffer.from(',"');
const CLOSE = Buffer.from('}');
/** Places after a leading `usage` key where the answer is cut and closed, to find where its value ends. */
const HEAD_TRIES = 32;

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

/**
 * The outermost object's `usage` member from the start of an answer: the start cut before a later
 * `,"` and closed with `}` is a whole JSON object, with `usage` among its members, only when the
 * key is a member of the outermost object and its value ended before the cut. The request scanner
 * tells (no second JSON reader).
 */
export function usageFromHead(head: Buffer): { usage: unknown } | null {
  const at = head.indexOf(USAGE_KEY);
  if (at < 0) return null;
  usageMember ??= new TopLevelMembers(['usage']);
  let end = head.indexOf(MEMBER_START, at);
  for (let tries = 0; end > 0 && tries < HEAD_TRIES; tries++, end = head.indexOf(MEMBER_START, end + 1)) {
    const span = usageMember.scan(Buffer.concat([head.subarray(0, end), CLOSE]))?.spans[0];
    if (span) return { usage: JSON.parse(head.toString('utf8', span.start, span.end)) };
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
  /** A larger answer's first HEAD_BYTES, taken when it passed the whole-copy bound. */
  private head: Buffer | null = null;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.kept += chunk.length;
    this.total += chunk.length;
    if (this.total <= WHOLE_COPY_BYTES) return;
    this.head ??= this.takeHead();
    // Past the whole-copy bound: drop whole chunks from the front while the rest still covers the tail.
    let drop = 0;
    while (drop < this.chunks.length - 1 && this.kept - this.chunks[drop]!.length >= TAIL_BYTES) this.kept -= this.chunks[drop++]!.length;
    if (drop > 0) this.chunks = this.chunks.slice(drop);
  }

  /** A copy of the first HEAD_BYTES (not a view: the chunks it came from are let go). */
  private takeHead(): Buffer {
    const first: Buffer[] = [];
    let bytes = 0;
    for (const chunk of this.chunks) {
      if (bytes >= HEAD_BYTES) break;
      first.push(chunk);
      bytes += chunk.length;
    }
    return Buffer.from(Buffer.concat(first, bytes).subarray(0, HEAD_BYTES));
  }

  /** The bytes the copy holds now. */
  get heldBytes(): number {
    return this.kept + (this.head?.length ?? 0);
  }

  /** Whether the copy holds the whole answer (else only its end). */
  get whole(): boolean {
    return this.total <= WHOLE_COPY_BYTES;
  }

  /** The whole answer, or null when only its ends are kept; joined once (usage() reads the same buffer). */
  wholeBody(): Buffer | null {
    if (!this.whole) return null;
    if (this.chunks.length !== 1) this.chunks = [Buffer.concat(this.chunks, this.kept)];
    return this.chunks[0]!;
  }

  usage(adapter: VendorAdapter, shape: ShapeId): Usage | null {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.kept);
    try {
      const whole = () => (this.whole ? JSON.parse(body.toString('utf8')) : {}) as Record<PropertyKey, unknown>;
      const tail = usageFromTail(body);
      if (tail) return adapter.usageFromBody(shape, answerWithUsage(tail.members, whole));
      if (this.whole) return adapter.usageFromBody(shape, whole());
      const first = this.head ? usageFromHead(this.head) : null;
      return first ? adapter.usageFromBody(shape, first) : null;
    } catch {
      return null; // not JSON: no usage to read
    }
  }
}
