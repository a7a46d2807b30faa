// The ioredis options of every Valkey connection Relay opens (the shared one, those duplicated
// from it for the key-health subscriber and for plugins, log-valkey's own). A Valkey that accepts
// connections and never answers must not leave commands pending until TCP gives up: a command
// without an answer within timeoutMs fails (each use has its path for a Valkey error: rate limits
// fail open, key health and budgets count locally, alert claims fall back on the database), a
// connection silent that long while commands wait is closed and opened again (socketTimeout: a
// silent connection would otherwise be kept for good), and TCP keepalive notices a vanished peer.
// A command Relay was told failed must not be applied later: ioredis's commandTimeout rejects it but
// leaves it queued (measured against Redis behind a black-holing proxy: INCR, SET, MULTI each applied after):
// - autoResendUnfulfilledCommands off: one written on a connection since closed was sent again on the next (even 6 reconnects later);
// - enableOfflineQueue off: one issued while (re)connecting was sent once ready (unless maxRetriesPerRequest's flush came first);
// - so a command sent while not connected fails at once, and start-up waits for the first connection (waitForValkey).
// One already written still reaches a Valkey that was only slow: no option withdraws it.
// A command written on a connection that closes before its answer: ioredis sets it aside for the next
// connection, where autoResendUnfulfilledCommands off drops it unsettled, so it failed only at its
// commandTimeout. maxRetriesPerRequest 0 flushes the pending commands at every close: each fails at
// once with MaxRetriesPerRequestError ("Reached the max retries per request limit (which is 0)"),
// never with "Stream isn't writeable" (kept for a command never written, which rate-limit.ts gives back).
// protocol 2: ioredis 6 speaks RESP3 by default (HELLO 3 at each connect). Relay keeps RESP2, the wire
// protocol it was built on: under RESP3 a subscribed connection stays in mode 'normal' (its PING answers
// "PONG", not ["pong", ""]), so valkey-subscription.ts would take every subscriber for unsubscribed
// and replace it at each check.
// ioredis 6 clears a command's socketTimeout timer when its connection closes (5.11 closed the next
// connection at that deadline: redis/ioredis#2147).
import type { Redis, RedisOptions } from 'ioredis';

/** Deadline of one Valkey command, by default (config valkey.timeoutMs). */
export const VALKEY_TIMEOUT_MS = 5_000;
/** TCP keepalive's first probe after this much idle time (the OS default is two hours). */
export const VALKEY_KEEPALIVE_MS = 10_000;

/** While Valkey is away rate limits fail open, so reconnect within 2 s (ioredis 6's default backs off to 5 s); jitter spreads a fleet. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 50, 2_000) + Math.floor(Math.random() * 100);

export function valkeyClientOptions(timeoutMs: number = VALKEY_TIMEOUT_MS): RedisOptions {
  return {
    protocol: 2, lazyConnect: false, maxRetriesPerRequest: 0, enableOfflineQueue: false, autoResendUnfulfilledCommands: false,
    commandTimeout: timeoutMs, socketTimeout: timeoutMs, keepAlive: VALKEY_KEEPALIVE_MS, retryStrategy: reconnectDelay,
  };
}

/**
 * Resolves once a new connection is ready, has failed once (Valkey down: closed) or answered
 * nothing for timeoutMs; never rejects. Without the offline queue a command sent before it fails
 * at once, so start-up waits here before its first commands (the shared key-health marks).
 */
export async function waitForValkey(redis: Redis, timeoutMs: number = VALKEY_TIMEOUT_MS): Promise<void> {
  if (redis.status === 'ready' || redis.status === 'end') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done).off('close', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done).once('close', done);
  });
}
