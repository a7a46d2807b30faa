// Reads the outermost object's members of a JSON body without building it: passthrough forwards a
// body as received and needs only `model` and `stream`, and an agent's turn is hundreds of KB. The
// scan (scanner.wat, strings sixteen bytes at a time with SIMD) accepts exactly what JSON.parse
// accepts and is ~12x faster on a 394 KB agent turn (test/bench/RESULTS.md, "The scan in WebAssembly").

import { SCANNER_WASM_BASE64 } from './scanner-binary.ts';

const PAGE_BYTES = 65536;
/** The module's memory is given back after a scan that needed more than this (one big body must not pin it). */
const KEPT_MEMORY_BYTES = 8 * 1024 * 1024;
const BACKSLASH = 0x5c;

/** Where a top-level member's value lies: `start` at its first byte, `end` just past its last. */
export interface ValueSpan {
  start: number;
  end: number;
  /** Object members the value holds at any depth, as written (a key written twice counts twice). */
  memberCount: number;
}

export interface MemberScan {
  /** The span of each wanted key's value, or null for a key the object lacks. */
  spans: Array<ValueSpan | null>;
  /** A wanted key written more than once (JSON.parse would keep the last; an upstream may keep the first). */
  duplicate: string | null;
  /** Object members the body holds at any depth, the outermost object's included, as written. */
  memberCount: number;
  /** Bit k set when some string, a key or a value at any depth, is watched text k as written. */
  seen: number;
  /** Whether some string holds a \u escape of a character from U+0040 to U+007F (a letter, `_`). */
  escapedLetter: boolean;
  /**
   * Whether some object, at any depth, has `"type":"reasoning"` and a non-empty string `"id"` without
   * exactly one `"encrypted_content"` that is a non-empty string, keys and text as written (an
   * escaped spelling sets escapedLetter): a Responses reasoning item naming a stored item by id alone.
   */
  reasoningById: boolean;
}

/** Up to this many texts of at most sixteen bytes are watched for (scanner.wat's slots). */
const WATCH_SLOTS = 4;
const WATCH_BYTES = 16;

// The few WebAssembly APIs used here, typed by hand: @types/node 20 types none.
type WasmModule = object;
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: unknown };
}
interface ScannerExports {
  readonly memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  readonly seen: { readonly value: number };
  readonly escapedLetter: { readonly value: number };
  readonly reasoningById: { readonly value: number };
  readonly keys: { readonly value: number };
  scan(n: number): number;
  watch(slot: number, length: number, a: number, b: number, c: number, d: number): void;
}

let compiled: WasmModule | undefined;

function scannerModule(): WasmModule {
  if (compiled === undefined) {
    const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
    if (!wasm) throw new Error('Relay needs WebAssembly with SIMD to read request bodies (it is missing under node --jitless)');
    compiled = new wasm.Module(Buffer.from(SCANNER_WASM_BASE64, 'base64'));
  }
  return compiled;
}

/**
 * Scans bodies for the values of `keys` in the outermost object, and for strings anywhere that are
 * one of `watched` (up to four, of 1 to 16 ASCII letters or `_`), and for objects that may be a
 * reasoning item named by id alone (MemberScan.reasoningById). Not re-entrant (a scan is
 * synchronous), so one per caller that scans.
 */
export class TopLevelMembers {
  private readonly wanted: Buffer[];
  private exports!: ScannerExports;
  /** The module's memory as a Buffer; remade when the memory grows (its old ArrayBuffer is detached). */
  private bytes!: Buffer;
  private current: MemberScan = { spans: [], duplicate: null, memberCount: 0, seen: 0, escapedLetter: false, reasoningById: false };

  constructor(private readonly keys: readonly string[], private readonly watched: readonly string[] = []) {
    if (watched.length > WATCH_SLOTS) throw new Error(`at most ${WATCH_SLOTS} texts can be watched`);
    for (const text of watched) {
      // Letters and `_` only: escapedLetter covers every other spelling of such a text.
      if (!/^[A-Za-z_]+$/.test(text) || text.length > WATCH_BYTES) {
        throw new Error(`'${text}' cannot be watched: 1 to ${WATCH_BYTES} ASCII letters or '_'`);
      }
    }
    this.wanted = keys.map((k) => Buffer.from(JSON.stringify(k)));
    this.instantiate();
  }

  /** The members when `body` is a valid JSON object; null when it is not valid JSON or not an object. */
  scan(body: Buffer): MemberScan | null {
    const n = body.length;
    // The body, sixteen zero bytes, then a stack of up to one byte per body byte (scanner.wat).
    this.reserve(2 * n + 32);
    body.copy(this.bytes, 0);
    const result: MemberScan = { spans: this.keys.map(() => null), duplicate: null, memberCount: 0, seen: 0, escapedLetter: false, reasoningById: false };
    this.current = result;
    const ok = this.exports.scan(n) === 1;
    result.memberCount = this.exports.keys.value;
    result.seen = this.exports.seen.value;
    result.escapedLetter = this.exports.escapedLetter.value === 1;
    result.reasoningById = this.exports.reasoningById.value === 1;
    if (this.bytes.length > KEPT_MEMORY_BYTES) this.instantiate();
    return ok ? result : null;
  }

  /** scanner.wat's import: one member of the outermost object. */
  private readonly onMember = (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, memberCount: number): void => {
    const k = this.keyIndex(keyStart, keyEnd);
    if (k < 0) return;
    const result = this.current;
    if (result.spans[k]) result.duplicate ??= this.keys[k]!;
    result.spans[k] = { start: valueStart, end: valueEnd, memberCount };
  };

  private keyIndex(start: number, end: number): number {
    const b = this.bytes;
    for (let k = 0; k < this.wanted.length; k++) {
      const w = this.wanted[k]!;
      if (w.length === end - start && b.compare(w, 0, w.length, start, end) === 0) return k;
    }
    // A key written with escapes (`"mod\u0065l"`) is the same key to JSON.parse.
    for (let p = start; p < end; p++) {
      if (b[p] === BACKSLASH) return this.keys.indexOf(JSON.parse(b.toString('utf8', start, end)) as string);
    }
    return -1;
  }

  private instantiate(): void {
    const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly!;
    const instance = new wasm.Instance(scannerModule(), { scan: { member: this.onMember } });
    this.exports = instance.exports as unknown as ScannerExports;
    this.bytes = Buffer.from(this.exports.memory.buffer);
    this.watched.forEach((text, slot) => {
      const words = Buffer.alloc(WATCH_BYTES);
      words.write(text, 'latin1');
      this.exports.watch(slot, text.length, words.readInt32LE(0), words.readInt32LE(4), words.readInt32LE(8), words.readInt32LE(12));
    });
  }

  private reserve(size: number): void {
    const memory = this.exports.memory;
    if (memory.buffer.byteLength >= size) return;
    memory.grow(Math.ceil((size - memory.buffer.byteLength) / PAGE_BYTES));
    this.bytes = Buffer.from(memory.buffer);
  }
}
