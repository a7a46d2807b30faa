// A Valkey command Relay was told failed is never applied later. On a client made with Relay's
// options (valkeyClientOptions), against the real Redis behind a proxy: a command rejected while
// its connection is black-holed, while the client reconnects, or at start-up before the first
// connection, is not in Redis once the proxy lets traffic through again and the client is back.
// ioredis's defaults sent such commands again on the next connection, or from its offline queue.
// Read with a separate client; "back" is two PINGs answered on the recovered connection, the
// second written after anything ioredis would send again there, so no wait is a guess.
import t from 'tap';
import { Redis } from 'ioredis';
import { ValkeySpend } from '../../core/budgets/valkey-spend.ts';
import { valkeyClientOptions } from '../../core/server/valkey-options.ts';
import { startHangingProxy, type HangingProxy } from '../support/hanging-proxy.ts';

const TIMEOUT_MS = 300;
const prefix = `relay:test-valkey-late:${process.pid}`;
const direct = new Redis(6379);
t.teardown(() => { direct.disconnect(); });

interface Command {
  name: string;
  key: string;
  send(redis: Redis): Promise<unknown>;
  read(): Promise<string | null>;
}

// A budget's shared-spend increment (Relay's own ValkeySpend: MULTI, HINCRBY x2, EXEC), an INCR, a SET.
const commands: Command[] = [
  {
    name: 'a budget\'s shared-spend increment', key: `${prefix}:spend:b1:0`,
    send: (redis) => new ValkeySpend(redis, `${prefix}:spend`).add('b1', 0, null, { micros: 7, tokens: 3 }),
    read: () => direct.hget(`${prefix}:spend:b1:0`, 'micros'),
  },
  { name: 'an INCR', key: `${prefix}:incr`, send: (redis) => redis.incr(`${prefix}:incr`), read: () => direct.get(`${prefix}:incr`) },
  { name: 'a SET', key: `${prefix}:set`, send: (redis) => redis.set(`${prefix}:set`, 'late'), read: () => direct.get(`${prefix}:set`) },
];

type Scenario = 'black-holed' | 'reconnecting' | 'starting';

/** The client's next `event` (events.once would reject on the connection errors the scenarios cause). */
function next(redis: Redis, event: 'ready' | 'reconnecting'): Promise<void> {
  return new Promise((resolve) => { redis.once(event, () => resolve()); });
}

/** A client through a fresh proxy, in the scenario's state: the next command gets no answer. */
async function clientIn(scenario: Scenario): Promise<{ redis: Redis; proxy: HangingProxy }> {
  const proxy = await startHangingProxy(6379);
  if (scenario === 'starting') proxy.hang();
  const redis = new Redis(`redis://127.0.0.1:${proxy.port}/0`, valkeyClientOptions(TIMEOUT_MS));
  redis.on('error', () => {});
  if (scenario === 'starting') return { redis, proxy };
  if (redis.status !== 'ready') await next(redis, 'ready');
  if (scenario === 'black-holed') {
    proxy.stall();
  } else {
    const lost = next(redis, 'reconnecting');
    proxy.hang();
    await lost;
  }
  return { redis, proxy };
}

for (const scenario of ['black-holed', 'reconnecting', 'starting'] as const) {
  for (const command of commands) {
    t.test(`${command.name} rejected while the connection is ${scenario} is not applied once Valkey answers again`, async (t) => {
      await direct.del(command.key);
      const { redis, proxy } = await clientIn(scenario);
      t.teardown(async () => {
        redis.disconnect();
        proxy.dropHeld();
        await proxy.close();
      });
      const sent = command.send(redis);
      const failure = await sent.then(() => null, (err: Error) => err);
      t.ok(failure, `rejected (${failure?.message})`);
      // Traffic goes through again from now on: the held connections stay held, the client's next one answers.
      const back = next(redis, 'ready');
      proxy.answer();
      await back;
      await redis.ping();
      await redis.ping();
      t.equal(await command.read(), null, 'not applied later');
    });
  }
}
