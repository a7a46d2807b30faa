// With the inference port at its connection cap (server.maxConnections), new connections there
// are closed; the control port's public /livez still answers, so a liveness probe pointed at it
// (as the shipped Kubernetes example does) does not restart a pod that is alive and serving.
import t from 'tap';
import net from 'node:net';
import { startRelay } from '../../core/testing.ts';

const relay = await startRelay({ config: { server: { host: '127.0.0.1', drainTimeoutMs: 2_000, maxConnections: 3 } } });
const held: net.Socket[] = [];
t.teardown(async () => {
  for (const s of held) s.destroy();
  await relay.close();
});

const { port } = new URL(relay.inferenceUrl);
for (let i = 0; i < 3; i++) {
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise<void>((r) => socket.once('connect', () => r()));
  held.push(socket);
}
// Let the server accept all three before probing.
await new Promise((r) => setTimeout(r, 200));

t.test('the inference port is saturated: a new connection gets no answer', async (t) => {
  const got = await fetch(`${relay.inferenceUrl}/livez`, { signal: AbortSignal.timeout(3_000) }).then((r) => r.status, () => 0);
  t.equal(got, 0, 'refused (closed) at the cap');
});

t.test('the control port answers /livez without credentials, and says only a status', async (t) => {
  const res = await fetch(`${relay.controlUrl}/livez`, { signal: AbortSignal.timeout(3_000) });
  t.equal(res.status, 200);
  t.same(await res.json(), { status: 'ok' });
});
