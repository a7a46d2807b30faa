// The JSONL segment files of the log-file backend: naming, listing newest first, retention.
import { randomBytes } from 'node:crypto';
import { readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

export interface Segment {
  path: string;
  name: string;
  /** Last write; every event in the segment finished before it. */
  mtimeMs: number;
  size: number;
}

const SEGMENT = /^usage-\d{8}T\d{9}Z-[a-z0-9]+-\d{6}\.jsonl$/;

/** Tells this process's segments apart from other instances writing to the same directory. */
export const INSTANCE_TAG = `${process.pid.toString(36)}${randomBytes(3).toString('hex')}`;

let sequence = 0;

/** usage-20260131T235959123Z-<instance>-<sequence>.jsonl: unique, and sorts by creation time. */
export function segmentName(now: Date): string {
  const stamp = now.toISOString().replace(/[-:.]/g, '').replace('Z', '');
  sequence = (sequence + 1) % 1_000_000;
  return `usage-${stamp}Z-${INSTANCE_TAG}-${String(sequence).padStart(6, '0')}.jsonl`;
}

/** UTC day of a date, for daily rotation. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Segments, most recently written first. */
export async function listSegments(dir: string): Promise<Segment[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const segments = await Promise.all(names.filter((n) => SEGMENT.test(n)).map(async (name) => {
    const file = path.join(dir, name);
    try {
      const s = await stat(file);
      return { path: file, name, mtimeMs: s.mtimeMs, size: s.size };
    } catch {
      return null; // removed by retention meanwhile
    }
  }));
  return segments.filter((s): s is Segment => s !== null).sort((a, b) => b.mtimeMs - a.mtimeMs || b.name.localeCompare(a.name));
}

/** Deletes segments last written more than `retentionDays` ago (0 keeps everything). */
export async function removeExpiredSegments(dir: string, retentionDays: number, keep: string | null): Promise<number> {
  if (retentionDays <= 0) return 0;
  const cutoff = Date.now() - retentionDays * 86_400_000;
  let removed = 0;
  for (const segment of await listSegments(dir)) {
    if (segment.mtimeMs >= cutoff || segment.path === keep) continue;
    try {
      await unlink(segment.path);
      removed += 1;
    } catch {
      // another instance removed it
    }
  }
  return removed;
}
