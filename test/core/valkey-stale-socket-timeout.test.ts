// A command pending when its connection closes must not close the next connection at its socket
// deadline. ioredis 5.11 (redis/ioredis#2147, fixed in 6.0.0) left that command's socketTimeout
// timer armed past the close: when it fired (up to timeoutMs after the command was written) it
// destroyed the client's current stream, the new and healthy connection. A proxy in front of the
// real Redis cuts the connection right after a command is written, before any answer can come back;
// the client connects again, and the test checks that connection keeps serving past the old deadline.
import t from 'tap';
import { Redis } from 'ioredis';
import { valkeyClientOptions, waitForValkey } from '../../core/server/valkey-options.ts';
import { eventually } from '../../core/testing.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';

const TIMEOUT_MS = 1_000;
const BOUND_MS = 10_000;
const key = `relay:test-valkey-stale-socket-timeout:${process.pid}`;

const proxy = await startHangingProxy(6379);
const client = new Redis({ host: '127.0.0.1', port: proxy.port, ...valkeyClientOptions(TIMEOUT_MS) });
const errors: string[] = [];
client.on('error', (err: Error) => { errors.push(err.message); });
let closes = 0;
client.on('close', () => { closes += 1; });
await waitForValkey(client);
t.teardown(async () => {
  client.disconnect();
  await proxy.close();
});

t.test('a command cut off by a closed connection does not close the next one at its deadline', async (t) => {
  t.equal(client.status, 'ready', 'connected through the proxy');
  const firstId = await client.client('ID');
  // The command is written on the connection (its socket deadline armed), then the proxy cuts it at
  // once: no answer can reach the client. hang() cuts the connections; answer() forwards new ones.
  const pending = client.get(key);
  const writtenAt = Date.now();
  proxy.hang();
  proxy.answer();
  const failed = await pending.then(() => null, (err: Error) => err.message);
  t.ok(failed, `the cut command fails (${failed})`);

  await eventually(() => client.status === 'ready', BOUND_MS, 10);
  t.equal(closes, 1, 'the cut connection closed once');
  const secondId = await client.client('ID');
  t.not(secondId, firstId, 'the client connected again');

  // Past the cut command's socket deadline (with margin), the new connection is still the one serving.
  const pastDeadline = writtenAt + 2 * TIMEOUT_MS - Date.now();
  if (pastDeadline > 0) await new Promise((r) => setTimeout(r, pastDeadline));
  t.equal(await client.ping(), 'PONG', 'the client answers after the old deadline');
  t.equal(await client.client('ID'), secondId, 'on the same connection');
  t.equal(closes, 1, `the new connection was never closed (client errors: ${errors.join('; ')})`);
});
