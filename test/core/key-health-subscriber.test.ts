// Key health's Valkey subscriber sends no commands, so a Valkey that goes silent on its connection
// (a black hole: the proxy in front of the real Redis stops forwarding, and keeps the connection
// open) would leave the instance deaf to other instances' marks for good. Its periodic PING finds
// out, warns once, and replaces the connection; once Valkey answers again, a mark another instance
// publishes reaches it again.
import t from 'tap';
import pino from 'pino';
import { Redis } from 'ioredis';
import type { HostKey } from '../../core/catalog/kinds.ts';
import { eventually } from '../../core/testing.ts';
import { KeyHealth } from '../../core/pipeline/key-health.ts';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';

// Short so the test is quick; what must happen is waited for far longer (BOUND_MS).
const TIMEOUT_MS = 1_000;
const BOUND_MS = 30_000;

const proxy = await startHangingProxy(6379);
const lines: Array<{ level: number; msg: string }> = [];
const log = pino({ level: 'debug' }, { write: (line: string) => { lines.push(JSON.parse(line)); } });
// This instance talks to Valkey through the proxy; the other one directly.
const viaProxy = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(TIMEOUT_MS) });
viaProxy.on('error', () => {});
const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions(TIMEOUT_MS) });
await waitForValkey(direct); // no offline queue: a command before the connection is up fails at once
const listening = new KeyHealth({ redis: viaProxy, log, valkeyTimeoutMs: TIMEOUT_MS });
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
/** A key the other instance marks as rate limited now (stored and published). */
function markElsewhere(): HostKey {
  const id = `00000000-0000-4000-8000-${process.pid.toString().padStart(6, '0')}${String(++n).padStart(6, '0')}`;
  const key = { metadata: { id, updatedAt: '2026-01-01T00:00:00.000Z' }, spec: { enabled: true, hostId: `host-${id}` } } as unknown as HostKey;
  marked.push(id);
  marking.reportFailure(key, 'rate_limit', 60_000, 'test: rate limited');
  return key;
}

/** Marks keys elsewhere until one reaches this instance (each is given `each` ms); true if one did. */
async function heard(each: number): Promise<boolean> {
  return eventually(async () => {
    const key = markElsewhere();
    return eventually(() => !listening.isAvailable(key), each, 20).then(() => true, () => false);
  }, BOUND_MS, 0).then(() => true, () => false);
}

const warned = () => lines.filter((l) => l.level === 40 && l.msg.startsWith('key health subscriber did not answer'));

t.test('a mark published elsewhere reaches the instance', async (t) => {
  t.ok(await heard(2_000), 'heard while Valkey answers');
});

t.test('after Valkey went silent on the subscriber\'s connection, and answers again, marks are heard again', async (t) => {
  const before = warned().length;
  proxy.stall();
  await eventually(() => warned().length > before, BOUND_MS, 20).catch(() => undefined);
  t.equal(warned().length, before + 1, 'the silent subscriber is noticed');
  proxy.answer();
  t.ok(await heard(2_000), 'a mark published elsewhere is heard again');
  const key = markElsewhere();
  await eventually(() => !listening.isAvailable(key), BOUND_MS, 20).catch(() => undefined);
  t.notOk(listening.isAvailable(key), 'and the next one too (through the subscription, not a reload)');
  t.equal(warned().length, before + 1, 'warned once, not at each ping without an answer');
  // Logged once the marks stored meanwhile are reloaded too (the other connection may be the last to come back).
  const back = () => lines.some((l) => l.level === 30 && l.msg.startsWith('key health subscriber answers again'));
  await eventually(back, BOUND_MS, 20).catch(() => undefined);
  t.ok(back(), 'and its return is logged');
});

t.test('a mark stored while the subscriber was deaf is reloaded once it answers again', async (t) => {
  const before = warned().length;
  proxy.stall();
  await eventually(() => warned().length > before, BOUND_MS, 20).catch(() => undefined);
  t.equal(warned().length, before + 1, 'the silent subscriber is noticed again');
  const missed = markElsewhere();
  // Give the message time to be lost (the subscriber's connection is held, nothing is forwarded).
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.ok(listening.isAvailable(missed), 'the mark published while deaf was not heard');
  proxy.answer();
  await eventually(() => !listening.isAvailable(missed), BOUND_MS, 20).catch(() => undefined);
  t.notOk(listening.isAvailable(missed), 'it is known once the subscriber answers again');
});
