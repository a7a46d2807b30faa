// The copy of a non-streamed answer that passthrough keeps to read usage from once it has been
// sent: the whole body up to WHOLE_MAX_BYTES, past that only its last TAIL_BYTES. Keeping every
// byte of a large answer (a batch of embeddings runs to tens of MB) doubled the memory it took.
import type { Usage } from '../canonical/types.ts';
import type { ShapeId, VendorAdapter } from '../hooks.ts';
import { topLevelMember } from '../http/json-top-level.ts';

/** Answers up to this size are kept whole (and parsed whole if their usage member is not found). */
export const WHOLE_MAX_BYTES = 8 * 1024 * 1024;
/** Past WHOLE_MAX_BYTES, this much of the end is kept: vendors put usage last or nearly. */
export const TAIL_BYTES = 256 * 1024;

export class UsageCopy {
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** True once the start of the body was let go. */
  private tailOnly = false;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (!this.tailOnly && this.bytes <= WHOLE_MAX_BYTES) return;
    this.tailOnly = true;
    while (this.chunks.length > 1 && this.bytes - this.chunks[0]!.length >= TAIL_BYTES) this.bytes -= this.chunks.shift()!.length;
  }

  /** Usage from what was kept: the adapter's usage member, else (whole bodies only) the parsed body. */
  usage(adapter: VendorAdapter, shape: ShapeId): Usage | null {
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    try {
      const member = adapter.usageMember?.(shape);
      const found = member ? topLevelMember(body, member, { isTail: this.tailOnly }) : undefined;
      if (found) return adapter.usageFromBody(shape, { [member!]: found.value });
      if (this.tailOnly) return null; // the start is gone: nothing more to read
      return adapter.usageFromBody(shape, JSON.parse(body.toString('utf8')));
    } catch {
      return null; // not JSON: no usage to read
    }
  }
}
