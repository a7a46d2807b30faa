// Tells a database outage (connection refused, timed out, name not resolved, server starting
// or shutting down) from a database that answers and refuses Relay (wrong password, no such
// database): the first is waited out, the second is a configuration error.
import type { Database } from '../db/types.ts';
import { StartupError } from '../errors.ts';

const OUTAGE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE',
  '57P01', '57P02', '57P03', // admin_shutdown, crash_shutdown, cannot_connect_now
]);

/** Resolves null when the database answers, a short reason when it is down; throws a StartupError when it refuses Relay. */
export async function databaseOutage(db: Database, where: string, timeoutMs = 3_000): Promise<string | null> {
  try {
    await db.ping(timeoutMs);
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    const message = (err as Error).message ?? String(err);
    if (code && OUTAGE_CODES.has(code)) return code;
    if (/timed? ?out|timeout|Connection terminated/i.test(message)) return 'timed out';
    throw new StartupError(`the database at ${where} refused Relay: ${message.split('\n')[0]}`);
  }
}

/** host:port of a database URL, for messages; never the user or password. */
export function databaseWhere(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? '');
    return `${parsed.hostname}:${parsed.port || '5432'}`;
  } catch {
    return 'the configured address';
  }
}
