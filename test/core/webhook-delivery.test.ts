// Webhook delivery against real HTTP servers: a 2xx is delivered at once; a 503 is retried and a
// later 200 delivers; a 404 fails at once (asking again will not help); a refused connection and
// a receiver that never answers fail after every attempt, with errors that never hold the URL.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliverWebhook, webhookTarget } from '../../core/budgets/webhook-delivery.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const hooks = await startWebhookReceiver();
t.teardown(() => hooks.close());
const options = { attempts: 3, retryBaseMs: 20, timeoutMs: 300 };

t.test('a 2xx is delivered on the first attempt, the payload as JSON', async (t) => {
  t.same(await deliverWebhook(`${hooks.url}/ok`, { text: 'hello' }, options), { ok: true, attempts: 1, error: null });
  t.same(hooks.on('/ok').map((h) => h.body), [{ text: 'hello' }]);
});

t.test('a 503 is retried; a later 200 delivers', async (t) => {
  // 503 to the first request, 200 to the next: by count, not by a timer a loaded machine outruns.
  let seen = 0;
  const flaky = createServer((req, res) => {
    seen += 1;
    req.resume();
    res.writeHead(seen === 1 ? 503 : 200).end();
  });
  await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { flaky.closeAllConnections(); flaky.close(); });
  const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/flaky`;
  t.same(await deliverWebhook(url, { n: 1 }, options), { ok: true, attempts: 2, error: null });
  t.equal(seen, 2);
});

t.test('a 404 fails at once', async (t) => {
  hooks.answer('/gone/secretPath', 404);
  t.same(await deliverWebhook(`${hooks.url}/gone/secretPath`, {}, options), { ok: false, attempts: 1, error: 'HTTP 404' });
});

t.test('a refused connection and a silent receiver fail after every attempt, the URL kept out of the error', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const refused = await deliverWebhook(`http://127.0.0.1:${port}/secretPath`, {}, options);
  t.same(refused, { ok: false, attempts: 3, error: 'connection failed (ECONNREFUSED)' });

  const silent = createServer(() => { /* never answers */ });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { silent.closeAllConnections(); silent.close(); });
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/secretPath`;
  const timedOut = await deliverWebhook(url, {}, { ...options, attempts: 2 });
  t.same(timedOut, { ok: false, attempts: 2, error: 'no answer within 300 ms' });
});

t.test('a target shows the origin only', async (t) => {
  t.equal(webhookTarget('https://user:pw@hooks.slack.com:8443/services/T/B/secret?x=1'), 'https://hooks.slack.com:8443/…');
  t.equal(webhookTarget('not a url'), '(not a URL)');
});
