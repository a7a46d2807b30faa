// The copy of a non-streamed answer that passthrough keeps to read usage from once it has been
// sent. An answer up to WHOLE_PARSE_BYTES is parsed whole; a larger one (a batch of embeddings runs
// to tens of MB) has only its top-level `usage` member read, through the request scanner, so that
// reading a bill never builds tens of MB of objects.
import type { Usage } from '../canonical/types.ts';
import type { ShapeId, VendorAdapter } from '../hooks.ts';
import { TopLevelMembers } from '../http/json-scan-wasm/wasm-scanner.ts';

export const WHOLE_PARSE_BYTES = 8 * 1024 * 1024;
/** Past this, the copy is dropped and usage is not read (the answer still reaches the client whole). */
export const MAX_COPY_BYTES = 256 * 1024 * 1024;

let usageMember: TopLevelMembers | undefined;

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
      if (body.length <= WHOLE_PARSE_BYTES) return adapter.usageFromBody(shape, JSON.parse(body.toString('utf8')));
      usageMember ??= new TopLevelMembers(['usage']);
      const span = usageMember.scan(body)?.spans[0];
      return span ? adapter.usageFromBody(shape, { usage: JSON.parse(body.toString('utf8', span.start, span.end)) }) : null;
    } catch {
      return null; // not JSON: no usage to read
    }
  }
}
