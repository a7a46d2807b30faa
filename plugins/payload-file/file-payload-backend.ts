// Captured payloads as one JSON file per request, in a folder per UTC day (for retention).
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CapturedPayload, PayloadBackend } from '../../core/plugin-api.ts';

export interface FilePayloadBackendOptions {
  dir: string;
  retentionDays: number;
  /** Free space on the payloads' file system that payloads leave to usage records; 0: none. */
  minFreeBytes?: number;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A file name for a request id: the id itself when it is a safe name, else its sha256. */
export function fileNameOf(requestId: string): string {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(requestId)
    ? `${requestId}.json`
    : `sha256-${createHash('sha256').update(requestId).digest('hex')}.json`;
}

export class FilePayloadBackend implements PayloadBackend {
  readonly id = 'file';
  private readonly dir: string;
  private lastRetention = 0;

  constructor(private readonly options: FilePayloadBackendOptions) {
    this.dir = path.resolve(options.dir);
  }

  async write(payloads: CapturedPayload[]): Promise<void> {
    await this.checkReserve(payloads);
    await Promise.all(payloads.map(async (payload) => {
      const dayDir = path.join(this.dir, payload.captured_at.slice(0, 10));
      await mkdir(dayDir, { recursive: true, mode: 0o700 });
      const file = path.join(dayDir, fileNameOf(payload.request_id));
      // Written whole, then renamed: a reader never sees half a file. Prompts and answers: for
      // Relay's user only (0600, folders 0700), as the local catalog snapshot.
      const temp = `${file}.${process.pid}.tmp`;
      try {
        await writeFile(temp, JSON.stringify(payload), { mode: 0o600 });
        await rename(temp, file);
      } catch (err) {
        // A failed write (a full disk) must not leave its partial file taking space.
        await rm(temp, { force: true }).catch(() => {});
        throw err;
      }
    }));
    await this.removeExpired();
  }

  /**
   * Refuses the batch (not retried: `retryable: false`) when writing it would leave less free
   * space than the reserve, so payloads never take the room usage records need.
   */
  private async checkReserve(payloads: CapturedPayload[]): Promise<void> {
    const reserve = this.options.minFreeBytes ?? 0;
    if (reserve <= 0 || payloads.length === 0) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const { bavail, bsize } = await statfs(this.dir);
    const free = bavail * bsize;
    let needed = 0;
    for (const payload of payloads) needed += payload.request_body.length + payload.response_body.length; // about: UTF-16 units
    if (free - needed >= reserve) return;
    throw Object.assign(
      new Error(`payload-file: ${free} bytes free, below the ${reserve}-byte reserve kept for usage records; ${payloads.length} payloads not written`),
      { code: 'RELAY_PAYLOAD_DISK_RESERVE', retryable: false },
    );
  }

  private async days(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((d) => DAY.test(d)).sort().reverse();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  async get(requestId: string): Promise<CapturedPayload | null> {
    const name = fileNameOf(requestId);
    for (const day of await this.days()) {
      try {
        return JSON.parse(await readFile(path.join(this.dir, day, name), 'utf8')) as CapturedPayload;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
    return null;
  }

  /** At most once an hour: deletes day folders older than retentionDays. */
  private async removeExpired(): Promise<void> {
    if (this.options.retentionDays <= 0 || Date.now() - this.lastRetention < 3_600_000) return;
    this.lastRetention = Date.now();
    const cutoff = new Date(Date.now() - this.options.retentionDays * 86_400_000).toISOString().slice(0, 10);
    for (const day of await this.days()) if (day < cutoff) await rm(path.join(this.dir, day), { recursive: true, force: true });
  }
}
