// The JSON scan of json-scan.ts run in WebAssembly (scanner.wat), which reads string contents
// sixteen bytes at a time with SIMD where JavaScript reads four. A coding agent's turn is mostly
// strings (its conversation, code in tool results), so the scan of a 394 KB Claude Code turn is
// where Relay spent about 30% of its CPU on the bench's agent turn (a profile at 3e7a539).
// Measured (test/bench/json-scan.ts, the two side by side): that turn 333 -> 135 µs, a 978 KB one
// 883 -> 334 µs, the bench's 0.1 KB chat body 0.40 -> 0.40 µs; `npm run bench:compare` against
// 3e7a539 on the agent turn (16 connections, two runs of 8 rounds): 1.323x and 1.317x throughput.
//
// Each scan copies the body into the module's memory (a memcpy: ~20 µs for 400 KB), runs there,
// and hears of the outermost object's members through an import; their keys are matched here.
// Where WebAssembly or its SIMD is missing (`node --jitless`), topLevelScanner() answers the
// JavaScript scanner, which accepts exactly the same bodies.
import { BodyBytes } from '../body-bytes.ts';
import { memberKeyIndex, TopLevelScanner, type BodyScan, type MemberScanner, type ValueSpan } from '../json-scan.ts';
import { SCANNER_WASM_BASE64 } from './scanner-binary.ts';

const PAGE_BYTES = 65536;
/** The module's memory is given back after a scan that needed more than this (one big body must not pin it). */
const KEPT_MEMORY_BYTES = 8 * 1024 * 1024;

// The few WebAssembly APIs used here, typed by hand: @types/node 20 types none, and TypeScript's
// own come with the DOM's globals. The global is missing under `node --jitless`.
type WasmModule = object;
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { readonly exports: unknown };
}
interface ScannerExports {
  readonly memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  scan(n: number): number;
}

const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
let compiled: WasmModule | null | undefined;

/** The compiled module; null where this Node cannot run it. */
function scannerModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = wasm ? new wasm.Module(Buffer.from(SCANNER_WASM_BASE64, 'base64')) : null;
    } catch {
      compiled = null; // no SIMD
    }
  }
  return compiled;
}

/** A scanner for `keys`: the WebAssembly one where it runs, else the JavaScript one. */
export function topLevelScanner(keys: readonly string[]): MemberScanner {
  const module = scannerModule();
  return module ? new WasmTopLevelScanner(module, keys) : new TopLevelScanner(keys);
}

export class WasmTopLevelScanner implements MemberScanner {
  private readonly wanted: Buffer[];
  private readonly fallback: TopLevelScanner;
  private exports!: ScannerExports;
  /** The module's memory as a Buffer; remade when the memory grows (its old ArrayBuffer is detached). */
  private bytes!: Buffer;
  private found: Array<ValueSpan | null> = [];

  constructor(
    private readonly module: WasmModule,
    private readonly keys: readonly string[],
  ) {
    this.wanted = keys.map((k) => Buffer.from(JSON.stringify(k)));
    this.fallback = new TopLevelScanner(keys);
    this.instantiate();
  }

  scan(body: Buffer): Array<ValueSpan | null> | null {
    return this.scanBody(BodyBytes.of(body))?.spans ?? null;
  }

  /** Copies the parts into the module's memory one after the other: the body is never joined outside it. */
  scanBody(body: BodyBytes): BodyScan | null {
    const n = body.length;
    // The body, sixteen zero bytes, then a stack of up to one byte per body byte (scanner.wat).
    if (!this.reserve(2 * n + 32)) return this.fallback.scanBody(body);
    const memory = this.bytes;
    let at = 0;
    for (const part of body.parts) at += part.copy(memory, at);
    const found: Array<ValueSpan | null> = this.keys.map(() => null);
    this.found = found;
    const ok = this.exports.scan(n) === 1;
    // A memory given back stays readable through `memory` (its buffer is dropped, not detached).
    if (memory.length > KEPT_MEMORY_BYTES) this.instantiate();
    return ok ? { spans: found, whole: memory.subarray(0, n) } : null;
  }

  /** scanner.wat's import: one member of the outermost object. */
  private readonly onMember = (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number): void => {
    const k = memberKeyIndex(this.keys, this.wanted, this.bytes, keyStart, keyEnd);
    if (k >= 0) this.found[k] = { start: valueStart, end: valueEnd };
  };

  private instantiate(): void {
    const instance = new wasm!.Instance(this.module, { scan: { member: this.onMember } });
    this.exports = instance.exports as unknown as ScannerExports;
    this.bytes = Buffer.from(this.exports.memory.buffer);
  }

  /** Grows the memory to at least `size` bytes; false when it cannot. */
  private reserve(size: number): boolean {
    const memory = this.exports.memory;
    if (memory.buffer.byteLength >= size) return true;
    try {
      memory.grow(Math.ceil((size - memory.buffer.byteLength) / PAGE_BYTES));
    } catch {
      return false; // past wasm32's 4 GiB, or out of memory
    }
    this.bytes = Buffer.from(memory.buffer);
    return true;
  }
}
