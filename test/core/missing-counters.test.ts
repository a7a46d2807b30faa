// The memory of hosts whose token counter is not there (core/pipeline/missing-counters.ts), through
// a real UpstreamClient against a real server: which statuses mark a route, for how long, per host
// version and upstream model, and the warning given once per mark.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { Route, UpstreamRequest } from '../../core/hooks.ts';
import { UpstreamClient } from '../../core/http/upstream-client.ts';
import { MISSING_FOR_MS, MissingCounters } from '../../core/pipeline/missing-counters.ts';

// Answers each request with the status its path names: /status/404 is answered 404.
const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(Number(req.url!.split('/').pop())).end('{}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const client = new UpstreamClient({ maxConnectionsPerOrigin: 4, connectTimeoutMs: 2_000, keepAliveTimeoutMs: 5_000 });
t.teardown(async () => {
  await client.close();
  server.close();
});

function routeTo(model: string, updatedAt = '2026-11-01T00:00:00.000Z', hostId = 'host-1'): Route {
  return { upstreamModel: model, host: { metadata: { id: hostId, slug: hostId, updatedAt }, spec: {} } } as unknown as Route;
}

/** The count call an adapter would make for `route`, answered `status`. */
async function count(counters: MissingCounters, route: Route, status: number, credential: string | null = 'sk-host'): Promise<void> {
  const req = counters.watched({ route, client, credential } as UpstreamRequest);
  const res = await req.client.send(`${base}/status/${status}`, { headers: {}, timeoutMs: 2_000 });
  res.body.resume();
}

t.test('404, 405 and 501 mark the route; other failures and answers do not', async (t) => {
  const warned: number[] = [];
  const counters = new MissingCounters((_route, status) => warned.push(status));
  for (const status of [200, 400, 429, 500, 502]) {
    const route = routeTo(`model-${status}`);
    await count(counters, route, status);
    t.notOk(counters.missing(route), `${status}: asked again`);
  }
  for (const status of [404, 405, 501]) {
    const route = routeTo(`model-${status}`);
    await count(counters, route, status);
    t.ok(counters.missing(route), `${status}: missing`);
  }
  t.same(warned, [404, 405, 501], 'one warning per mark');
});

t.test('a mark lasts MISSING_FOR_MS, is per upstream model and host version, and warns once while it lasts', async (t) => {
  let now = 1_000_000;
  const warned: string[] = [];
  const counters = new MissingCounters((route) => warned.push(route.upstreamModel), () => now);
  const route = routeTo('gpt-4o');
  await count(counters, route, 404);
  t.ok(counters.missing(route));
  t.notOk(counters.missing(routeTo('gpt-4o-mini')), 'another model of the same host is asked');
  t.notOk(counters.missing(routeTo('gpt-4o', '2026-11-02T00:00:00.000Z')), 'the host edited since: asked');
  t.notOk(counters.missing(routeTo('gpt-4o', undefined, 'host-2')), 'another host: asked');

  now += MISSING_FOR_MS - 1;
  t.ok(counters.missing(route), 'still missing just before the mark ends');
  await count(counters, route, 404);
  t.same(warned, ['gpt-4o'], 'a count answered missing again while marked: no second warning');
  now += MISSING_FOR_MS;
  t.notOk(counters.missing(route), 'asked again once the mark ends');
  await count(counters, route, 404);
  t.same(warned, ['gpt-4o', 'gpt-4o'], 'a new mark warns again');
});

t.test("a count with the caller's own credential (proxy mode) marks nothing", async (t) => {
  const warned: number[] = [];
  const counters = new MissingCounters((_route, status) => warned.push(status));
  const route = routeTo('proxied');
  await count(counters, route, 404, null);
  t.notOk(counters.missing(route), "one caller's account does not decide for the others");
  t.same(warned, []);
});

t.test('the memory is bounded: the oldest mark goes first', async (t) => {
  const counters = new MissingCounters();
  const first = routeTo('model-0');
  await count(counters, first, 404);
  for (let i = 1; i <= 1024; i++) await count(counters, routeTo(`model-${i}`), 404);
  t.notOk(counters.missing(first), 'the oldest was dropped');
  t.ok(counters.missing(routeTo('model-1024')), 'the newest is kept');
  t.ok(counters.missing(routeTo('model-1')), 'and the ones after the oldest');
});

t.test('the watched client is the same client: the answer is the one the adapter reads', async (t) => {
  const counters = new MissingCounters();
  const req = counters.watched({ route: routeTo('m'), client, credential: 'sk-host' } as UpstreamRequest);
  t.not(req.client, client, 'a view of the client');
  const res = await req.client.send(`${base}/status/200`, { headers: {}, timeoutMs: 2_000 });
  t.equal(res.status, 200);
  let text = '';
  for await (const chunk of res.body) text += String(chunk);
  t.equal(text, '{}');
});
