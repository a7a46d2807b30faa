// Key health's subscriber, while Valkey stays black-holed (the proxy in front of the real Redis holds
// every connection, answering nothing): its replacements come further and further apart, up to a
// cap, instead of one every 2 x timeoutMs for good; once Valkey answers again it is logged once and
// heard again. What it missed meanwhile is reconciled with Valkey's store, clears included: a mark
// another instance cleared is dropped here, a mark this instance set that never reached the store is
// kept. close() during a wait between replacements leaves no timer that reconnects, and no socket.
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { HostKey } from '../../core/catalog/kinds.ts';
import { eventually } from '../../core/testing.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';

// The ping's deadline and the longest wait between replacements: short so the test is quick.
const TIMEOUT_MS = 150;
const CAP_MS = 1_200;
const BOUND_MS = 30_000;

type Line = { level: number; msg: string; failures?: number };
function capture(): { lines: Line[]; log: pino.Logger } {
  const lines: Line[] = [];
  return { lines, log: pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line)); } }) };
}

const proxy = await startHangingProxy(6379);
const { lines, log } = capture();
// This instance talks to Valkey through the proxy; the other one directly.
const viaProxy = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(TIMEOUT_MS) });
viaProxy.on('error', () => {});
const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(1_000) });
const listening = new KeyHealth({ redis: viaProxy, log, valkeyTimeoutMs: TIMEOUT_MS, subscriberMaxBackoffMs: CAP_MS });
const marking = new KeyHealth({ redis: direct, log: pino({ level: 'silent' }) });
const marked: string[] = [];
t.teardown(async () => {
  proxy.dropHeld();
  await listening.close();
  await marking.close();
  if (marked.length > 0) await direct.del(...marked.map((id) => `relay:key-health:mark:${id}`));
  viaProxy.disconnect();
  direct.disconnect();
  await proxy.close();
});

let n = 0;
function newKey(): HostKey {
  const id = `00000000-0000-4000-8000-${process.pid.toString().padStart(6, '0')}${String(++n).padStart(6, '0')}`;
  marked.push(id);
  return { metadata: { id, updatedAt: '2026-01-01T00:00:00.000Z' }, spec: { enabled: true, hostId: `host-${id}` } } as unknown as HostKey;
}
/** Marks the key as rate limited for a minute on that instance (stored and published). */
function rateLimit(on: KeyHealth, key: HostKey): HostKey {
  on.reportFailure(key, 'rate_limit', 60_000, 'test: rate limited');
  return key;
}
const stored = async (key: HostKey) => (await direct.exists(`relay:key-health:mark:${key.metadata.id}`)) === 1;

/** Marks keys elsewhere until one reaches this instance (each is given `each` ms); true if one did. */
async function heard(each: number): Promise<boolean> {
  return eventually(async () => {
    const key = rateLimit(marking, newKey());
    return eventually(() => !listening.isAvailable(key), each, 20).then(() => true, () => false);
  }, BOUND_MS, 0).then(() => true, () => false);
}

const warned = (from: Line[]) => from.filter((l) => l.level === 40 && l.msg.startsWith('key health subscriber did not answer'));
const back = (from: Line[]) => from.filter((l) => l.level === 30 && l.msg.startsWith('key health subscriber answers again'));

/** Black-holes the proxy and waits for the warning; then gives Valkey back and waits for the info line. */
async function deaf(during: () => Promise<void>): Promise<void> {
  const warnedBefore = warned(lines).length;
  const backBefore = back(lines).length;
  proxy.stall();
  await eventually(() => warned(lines).length > warnedBefore, BOUND_MS, 20).catch(() => undefined);
  await during();
  proxy.answer();
  await eventually(() => back(lines).length > backBefore, BOUND_MS, 20).catch(() => undefined);
}

t.test('a mark published elsewhere reaches the instance', async (t) => {
  t.ok(await heard(2_000), 'heard while Valkey answers');
});

t.test('while Valkey is black-holed, the subscriber is replaced less and less often, up to a cap; then it is back', async (t) => {
  const warnedBefore = warned(lines).length;
  const backBefore = back(lines).length;
  const from = proxy.accepted().length;
  proxy.stall();
  // Six connections after the stall: five gaps, the first ones growing, the last ones at the cap.
  await eventually(() => proxy.accepted().length - from >= 6, BOUND_MS, 20).catch(() => undefined);
  const times = proxy.accepted().slice(from, from + 6);
  t.equal(times.length, 6, 'the subscriber keeps being replaced');
  const gaps = times.slice(1).map((at, i) => at - times[i]!);
  t.ok(gaps[0]! < gaps[1]! && gaps[1]! < gaps[2]!, `the gaps between attempts grow (${gaps.join(', ')} ms)`);
  t.ok(gaps[2]! >= 2 * gaps[0]!, `doubling, less the jitter (${gaps.join(', ')} ms)`);
  // 2 x timeoutMs doubled three times would be 2.4 s past the cap of 1.2 s; jitter takes off at most a quarter.
  t.ok(gaps.every((gap) => gap <= 1.5 * CAP_MS), `no gap goes past the cap (${gaps.join(', ')} ms)`);
  t.ok(gaps.slice(3).every((gap) => gap >= 0.7 * CAP_MS), `the last ones are at the cap (${gaps.join(', ')} ms)`);
  t.equal(warned(lines).length, warnedBefore + 1, 'warned once');

  proxy.answer();
  await eventually(() => back(lines).length > backBefore, BOUND_MS, 20).catch(() => undefined);
  t.ok(await heard(2_000), 'a mark published elsewhere is heard again');
  // Any second line would have come within a few checks.
  await new Promise((resolve) => setTimeout(resolve, 5 * TIMEOUT_MS));
  t.equal(back(lines).length, backBefore + 1, 'its return is logged once');
  t.equal(warned(lines).length, warnedBefore + 1, 'and not warned about again');
});

t.test('once the subscriber is back, marks cleared elsewhere while it was deaf are gone here; its own unstored one stays', async (t) => {
  const clearedThere = rateLimit(marking, newKey());
  const ownClearedThere = rateLimit(listening, newKey());
  const kept = rateLimit(marking, newKey());
  await eventually(async () => !listening.isAvailable(clearedThere) && !listening.isAvailable(kept)
    && await stored(ownClearedThere) && !marking.isAvailable(ownClearedThere), BOUND_MS, 20).catch(() => undefined);
  t.ok(!listening.isAvailable(clearedThere) && !listening.isAvailable(kept) && !marking.isAvailable(ownClearedThere), 'the marks are known to both instances');
  let ownUnstored: HostKey | null = null;
  await deaf(async () => {
    // The other instance's requests succeed: it clears both marks (deleted from the store and published).
    marking.reportSuccess(clearedThere);
    marking.reportSuccess(ownClearedThere);
    await eventually(async () => !await stored(clearedThere) && !await stored(ownClearedThere), BOUND_MS, 20).catch(() => undefined);
    // This instance marks a key while Valkey does not answer it, its connection closed for that (a
    // command past its deadline): the write fails at once, the mark never reaches the store.
    await viaProxy.ping().catch(() => undefined);
    await eventually(() => viaProxy.status !== 'ready', BOUND_MS, 5).catch(() => undefined);
    const unshared = () => lines.filter((l) => l.msg === 'could not share key health').length;
    const unsharedBefore = unshared();
    ownUnstored = rateLimit(listening, newKey());
    await eventually(() => unshared() > unsharedBefore, BOUND_MS, 20).catch(() => undefined);
    t.ok(!listening.isAvailable(clearedThere), 'the clear was not heard while deaf');
  });
  t.equal(back(lines).length > 0, true, 'the subscriber answers again');
  t.ok(listening.isAvailable(clearedThere), 'a mark the other instance cleared meanwhile is gone');
  t.ok(listening.isAvailable(ownClearedThere), 'and so is one this instance had stored, cleared there meanwhile');
  t.notOk(listening.isAvailable(ownUnstored!), 'a mark this instance set while deaf, never stored, is kept');
  t.notOk(await stored(ownUnstored!), '(it never reached the store)');
  t.notOk(listening.isAvailable(kept), 'a mark still in the store is kept');
});

t.test('close() while waiting between two replacements stops them, and leaves no connection', async (t) => {
  const proxy2 = await startHangingProxy(6379);
  const captured = capture();
  const redis = new Redis({ host: '127.0.0.1', port: proxy2.port, ...valkeyClientOptions(TIMEOUT_MS) });
  redis.on('error', () => {});
  const closing = new KeyHealth({ redis, log: captured.log, valkeyTimeoutMs: TIMEOUT_MS, subscriberMaxBackoffMs: CAP_MS });
  t.teardown(async () => { await closing.close(); redis.disconnect(); await proxy2.close(); });
  await waitForValkey(redis);
  await redis.ping();
  proxy2.stall();
  // The second replacement waits at least 4 x timeoutMs less the jitter, less a ping's deadline.
  const waiting = () => captured.lines.some((l) => l.level === 20 && l.msg === 'key health subscriber: replacing its Valkey connection' && (l.failures ?? 0) >= 2);
  await eventually(waiting, BOUND_MS, 5).catch(() => undefined);
  t.ok(waiting(), 'the subscriber is waiting to be replaced again');
  await closing.close();
  redis.disconnect();
  const attempts = proxy2.accepted().length;
  await new Promise((resolve) => setTimeout(resolve, 2 * CAP_MS));
  t.equal(proxy2.accepted().length, attempts, 'no connection is opened after close()');
  await eventually(() => proxy2.clients() === 0, BOUND_MS, 20).catch(() => undefined);
  t.equal(proxy2.clients(), 0, 'none is left open');
});
