// The opaque page cursor of /api/logs and /api/usage/events. Every backend orders events newest
// first by (started_at, request_id) and pages by keyset on that pair, so a page never repeats or
// skips an event that existed when paging started, whatever is written meanwhile.
import { RelayError } from '../errors.ts';
import type { UsageEvent } from '../hooks.ts';

export interface CursorPosition {
  /** started_at of the last event of the previous page, epoch milliseconds. */
  startedAtMs: number;
  requestId: string;
}

export function encodeCursor(event: Pick<UsageEvent, 'started_at' | 'request_id'>): string {
  return Buffer.from(JSON.stringify([Date.parse(event.started_at), event.request_id])).toString('base64url');
}

/** Throws RelayError 400 (field `cursor`) when the cursor was not made by encodeCursor. */
export function decodeCursor(cursor: string): CursorPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isFinite(value[0]) && typeof value[1] === 'string') {
      return { startedAtMs: value[0] as number, requestId: value[1] };
    }
  } catch {
    // fall through
  }
  throw new RelayError('RELAY_ERR_BAD_REQUEST', 'cursor is not a cursor returned by a previous page', { field: 'cursor' });
}

/** Newest first: started_at descending, then request_id descending. */
export function compareNewestFirst(a: UsageEvent, b: UsageEvent): number {
  const ta = Date.parse(a.started_at);
  const tb = Date.parse(b.started_at);
  if (ta !== tb) return tb - ta;
  return a.request_id < b.request_id ? 1 : a.request_id > b.request_id ? -1 : 0;
}

/** True when `event` comes after the cursor position in newest-first order. */
export function isAfterCursor(event: UsageEvent, position: CursorPosition): boolean {
  const t = Date.parse(event.started_at);
  if (t !== position.startedAtMs) return t < position.startedAtMs;
  return event.request_id < position.requestId;
}
