// A usage backend that does not answer (log-postgres on its own database, nothing listening) is
// reported as itself: RELAY_ERR_LOG_BACKEND_UNAVAILABLE naming the backend, never the catalog
// database's code, while catalog writes go on; when it is not the selected backend, reads answer
// from the others and name it in `skipped`.
import t from 'tap';
import net from 'node:net';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const password = 'usage-db-s3cret';
const deadUrl = `postgres://relay:${password}@127.0.0.1:${await closedPort()}/usage`;
const upstream = await startFakeUpstream();
const relay = await startRelay({
  plugins: [
    { use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' },
    { use: 'log-file' }, { use: 'log-postgres', options: { url: deadUrl } },
  ],
});
t.teardown(async () => {
  await relay.close();
  await upstream.close();
});

const route = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a' });

async function chat(): Promise<string> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${route.relayKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.headers.get('x-request-id')!;
}

t.test('the selected usage backend down: its own 503, not the catalog database\'s', async (t) => {
  t.equal((await relay.api('PUT', '/api/settings/usage-logging', { backend: 'postgres' })).status, 200);
  await eventually(() => relay.relay.settings.get('usage-logging').backend === 'postgres');
  for (const url of ['/api/logs', '/api/usage/events', '/api/logs/some-request', '/api/usage/summary?since=1h', '/api/usage/timeseries?since=1h']) {
    const res = await relay.api('GET', url);
    t.equal(res.status, 503, url);
    t.equal(res.body.error.code, 'RELAY_ERR_LOG_BACKEND_UNAVAILABLE', url);
    t.match(res.body.error.message, /the postgres usage backend did not answer/, `${url} names the backend`);
    t.notMatch(res.body.error.message, /changes are refused|database is unreachable/i, `${url} does not say the catalog is down`);
    t.notMatch(JSON.stringify(res.body), password, `${url}: no secret of the backend's URL`);
    t.notMatch(JSON.stringify(res.body), /stack|at .*\.ts/, `${url}: no internals`);
  }
  const created = await relay.api('POST', '/api/providers', { metadata: { displayName: 'during the usage outage' }, spec: { adapter: 'openai' } });
  t.equal(created.status, 201, 'catalog writes go on');
});

t.test('another loaded backend down: reads answer from the selected one and name it in skipped', async (t) => {
  t.equal((await relay.api('PUT', '/api/settings/usage-logging', { backend: 'file' })).status, 200);
  await eventually(() => relay.relay.settings.get('usage-logging').backend === 'file');
  const id = await chat();
  await eventually(async () => (await relay.api('GET', `/api/logs/${id}`)).status === 200, 5_000, 50);
  const skipped = [{ backend: 'postgres', code: 'RELAY_ERR_LOG_BACKEND_UNAVAILABLE', message: /the postgres usage backend did not answer/ }];
  const list = await relay.api('GET', '/api/logs?since=1h');
  t.equal(list.status, 200);
  t.same(list.body.items.map((e: { request_id: string }) => e.request_id), [id]);
  t.match(list.body.skipped, skipped);
  const summary = await relay.api('GET', '/api/usage/summary?since=1h');
  t.equal(summary.body.totals.requests, 1);
  t.match(summary.body.skipped, skipped);
  const series = await relay.api('GET', '/api/usage/timeseries?since=1h&bucket=1h');
  t.match(series.body.skipped, skipped);
  const detail = await relay.api('GET', `/api/logs/${id}`);
  t.equal(detail.body.request_id, id);
  t.match(detail.body.skipped, skipped);
  const missing = await relay.api('GET', '/api/logs/no-such-request');
  t.equal(missing.status, 503, 'not found where it looked, but a backend that could hold it did not answer');
  t.equal(missing.body.error.code, 'RELAY_ERR_LOG_BACKEND_UNAVAILABLE');
});
