// The ioredis options of every Valkey connection Relay opens (the shared one, those duplicated
// from it for the key-health subscriber and for plugins, log-valkey's own). A Valkey that accepts
// connections and never answers must not leave commands pending until TCP gives up: a command
// without an answer within timeoutMs fails (each use has its path for a Valkey error: rate limits
// fail open, key health and budgets count locally, alert claims fall back on the database), a
// connection silent that long while commands wait is closed and opened again (socketTimeout: a
// silent connection would otherwise be kept for good), and TCP keepalive notices a vanished peer.
// Commands sent on a connection that closes fail rather than being sent again on the next one.
import type { RedisOptions } from 'ioredis';

/** Deadline of one Valkey command, by default (config valkey.timeoutMs). */
export const VALKEY_TIMEOUT_MS = 5_000;
/** TCP keepalive's first probe after this much idle time (the OS default is two hours). */
export const VALKEY_KEEPALIVE_MS = 10_000;

export function valkeyClientOptions(timeoutMs: number = VALKEY_TIMEOUT_MS): RedisOptions {
  return {
    lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true,
    commandTimeout: timeoutMs, socketTimeout: timeoutMs, keepAlive: VALKEY_KEEPALIVE_MS,
    // A command its caller was told failed (timed out) must not run later: a budget increment would count twice.
    autoResendUnfulfilledCommands: false,
  };
}
