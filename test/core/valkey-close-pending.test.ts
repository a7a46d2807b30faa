// A Valkey command already written when its connection closes fails at the close, not at its
// deadline: with Relay's options (valkeyClientOptions) ioredis would otherwise set it aside for the
// next connection, never send it there (autoResendUnfulfilledCommands off) and leave it to its
// commandTimeout. A proxy in front of the real Redis holds the connection (the command is written
// and never answered), then cuts it. The deadline here is far beyond the bound the test waits.
import t from 'tap';
import { Redis } from 'ioredis';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { eventually } from '../../core/testing.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { settlesWithin } from '../support/settles-within.ts';

const DEADLINE_MS = 600_000;
const BOUND_MS = 10_000;
const key = `relay:test-valkey-close-pending:${process.pid}`;

const proxy = await startHangingProxy(6379);
const viaProxy = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(DEADLINE_MS) });
viaProxy.on('error', () => {});
const direct = new Redis({ host: '127.0.0.1', port: 6379, ...valkeyClientOptions() });
await Promise.all([waitForValkey(viaProxy), waitForValkey(direct)]);
t.teardown(async () => {
  viaProxy.disconnect();
  await direct.del(key);
  direct.disconnect();
  await proxy.close();
});

/** How many times the proxy held `command` (written by the client, never forwarded) so far. */
const held = (command: string) => proxy.held().toLowerCase().split(`\r\n${command.toLowerCase()}\r\n`).length - 1;

/** Why the promise failed (its error's message), or null if it did not within the bound. */
async function failure(p: Promise<unknown>): Promise<string | null> {
  let message: string | null = null;
  const settled = await settlesWithin(p.catch((err: Error) => { message = err.message; throw err; }), BOUND_MS);
  return settled === 'rejected' ? message : null;
}

t.test('commands written before the connection closed fail at the close', async (t) => {
  proxy.stall();
  const get = viaProxy.get(key);
  const transaction = viaProxy.multi().incr(key).pexpire(key, 60_000).exec();
  // Both written: the proxy holds what they sent.
  await eventually(() => held('EXEC') === 1 && held('GET') === 1, BOUND_MS, 10);
  proxy.answer();
  proxy.dropHeld();
  const [getFailed, transactionFailed] = await Promise.all([failure(get), failure(transaction)]);
  t.ok(getFailed, `a command fails (${getFailed})`);
  t.ok(transactionFailed, `so does a transaction (${transactionFailed})`);
  // rate-limit.ts gives a slot back only for a command never written: these were.
  t.notMatch(getFailed ?? '', /Stream isn't writeable/, 'not with the error of a command never written');

  await waitForValkey(viaProxy);
  t.equal(await viaProxy.ping(), 'PONG', 'the client connects again, and answers');
  t.equal(await direct.get(key), null, 'the failed transaction was not sent again on the new connection');
});

t.test('a command sent while the client is not connected still fails as never written', async (t) => {
  proxy.stall();
  const before = held('GET');
  const pending = viaProxy.get(key);
  await eventually(() => held('GET') > before, BOUND_MS, 10);
  proxy.answer();
  proxy.dropHeld();
  await failure(pending);
  // Between the close and the next connection (ioredis waits before reconnecting).
  const whileDown = viaProxy.status === 'ready' ? null : await failure(viaProxy.get(key));
  if (whileDown !== null) t.match(whileDown, /Stream isn't writeable/, `never written (${whileDown})`);
  else t.pass('reconnected before a command could be sent while down');
  await waitForValkey(viaProxy);
});
