// Appends usage events to the current segment and rotates by size and by UTC day.
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { removeExpiredSegments, segmentName, utcDay } from './segments.ts';

export interface SegmentWriterOptions {
  dir: string;
  maxFileBytes: number;
  rotateDaily: boolean;
  retentionDays: number;
}

interface OpenSegment {
  path: string;
  handle: FileHandle;
  day: string;
  size: number;
}

export class SegmentWriter {
  private current: OpenSegment | null = null;

  constructor(private readonly options: SegmentWriterOptions) {}

  get currentPath(): string | null {
    return this.current?.path ?? null;
  }

  /** One append per batch: one line per event (each a serialized UsageEvent). */
  async appendLines(lines: string[]): Promise<void> {
    if (lines.length === 0) return;
    const bytes = encodeLines(lines);
    const segment = await this.segmentFor(bytes.length);
    try {
      const { bytesWritten } = await segment.handle.write(bytes);
      segment.size += bytesWritten;
      if (bytesWritten !== bytes.length) throw new Error(`short write to ${segment.path}: ${bytesWritten} of ${bytes.length} bytes`);
    } catch (err) {
      // A partial line may be on disk: never append after it. The retry opens a new segment,
      // and readers skip the broken line.
      await this.closeCurrent();
      throw err;
    }
  }

  private async segmentFor(incoming: number): Promise<OpenSegment> {
    const now = new Date();
    const current = this.current;
    if (current) {
      const dayChanged = this.options.rotateDaily && current.day !== utcDay(now);
      const full = current.size > 0 && current.size + incoming > this.options.maxFileBytes;
      if (!dayChanged && !full) return current;
      await this.closeCurrent();
    }
    await mkdir(this.options.dir, { recursive: true });
    const file = path.join(this.options.dir, segmentName(now));
    const handle = await open(file, 'a');
    this.current = { path: file, handle, day: utcDay(now), size: 0 };
    // Retention runs on rotation, off the write path's critical section.
    removeExpiredSegments(this.options.dir, this.options.retentionDays, file).catch(() => {});
    return this.current;
  }

  async closeCurrent(): Promise<void> {
    const current = this.current;
    this.current = null;
    if (current) await current.handle.close().catch(() => {});
  }
}

/**
 * The lines as UTF-8, each followed by a newline, written straight into one buffer (no
 * batch-sized string on the heap).
 */
function encodeLines(lines: string[]): Buffer {
  let size = lines.length;
  for (const line of lines) size += Buffer.byteLength(line, 'utf8');
  const bytes = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const line of lines) {
    offset += bytes.write(line, offset, 'utf8');
    bytes[offset++] = 0x0a;
  }
  return bytes;
}
