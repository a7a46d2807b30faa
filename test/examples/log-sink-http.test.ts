// examples/log-sink-http end to end: Relay started from the example's config file (the sink
// loaded by path, its URL from ${LOG_SINK_URL}), the sink selected at run time, and a local HTTP
// endpoint that receives the batches; while the endpoint is down, the shared queue holds the
// batch and retries it until the endpoint is back.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { eventually, seedRoute, startRelay } from '../../core/testing.ts';
import type { UsageEvent } from '../../core/plugin-api.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, viaRelay } from '../support/relay-client.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A local endpoint that records every POSTed batch; `stop()` and `start()` take it down and back on the same port. */
function sinkEndpoint() {
  const batches: Array<{ headers: http.IncomingHttpHeaders; events: UsageEvent[] }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events: UsageEvent[] };
      batches.push({ headers: req.headers, events: body.events });
      res.writeHead(204).end();
    });
  });
  let port = 0;
  return {
    batches,
    events: () => batches.flatMap((b) => b.events),
    url: () => `http://127.0.0.1:${port}/usage`,
    async start() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const sink = sinkEndpoint();
await sink.start();
const upstream = await startFakeUpstream();
const relay = await startRelay({ configFile: path.join(root, 'examples/log-sink-http/relay.yaml'), env: { LOG_SINK_URL: sink.url() } });
t.teardown(async () => {
  await relay.close();
  await upstream.close();
  await sink.stop().catch(() => undefined);
});

const seeded = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'sink-model' });
await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.hostKeysOfHost(seeded.hostId).length > 0);
const chat = () => viaRelay(relay, '/vendor-a/v1/chat/completions', seeded.relayKey, { model: 'sink-model', messages: [{ role: 'user', content: 'hi' }] });

t.test('selected at run time, the sink receives the batch', async (t) => {
  const loaded = relay.relay.plugins.find((p) => p.plugin.name === 'log-sink-http');
  t.equal(loaded?.source, path.join(root, 'examples/log-sink-http/index.ts'), 'loaded by path from the config file');
  const put = await relay.api('PUT', '/api/settings/usage-logging', { backend: 'http' });
  t.equal(put.status, 200);
  await eventually(() => relay.relay.settings.get('usage-logging').backend === 'http', 5_000);

  const answer = await chat();
  t.equal(answer.status, 200);
  const requestId = answer.headers.get('x-request-id')!;
  await eventually(() => sink.events().some((e) => e.request_id === requestId), 10_000, 25);
  const event = sink.events().find((e) => e.request_id === requestId)!;
  t.match(event, { status: 200, model_slug: 'sink-model', relay_key_id: seeded.relayKeyId, inbound_shape: 'openai.chat', upstream_shape: 'openai.chat' });
  t.ok(event.input_tokens > 0 && event.output_tokens > 0, 'with token counts');
  t.match(sink.batches[0]!.headers['content-type'], /application\/json/);
});

t.test('a sink that is down, then back, still receives the events', async (t) => {
  await sink.stop();
  const before = relay.relay.observer.stats().usage.http!;
  const answers = [await chat(), await chat()];
  t.same(answers.map((a) => a.status), [200, 200], 'responses do not wait for the sink');
  const ids = answers.map((a) => a.headers.get('x-request-id')!);
  await eventually(() => relay.relay.observer.stats().usage.http!.retries > before.retries, 10_000, 25);
  t.ok(relay.relay.observer.stats().usage.http!.backingOff, 'the shared queue holds the batch and backs off');

  await sink.start();
  await eventually(() => ids.every((id) => sink.events().some((e) => e.request_id === id)), 20_000, 50);
  t.pass('both events arrived once the sink was back');
  await eventually(() => relay.relay.observer.stats().usage.http!.queued === 0, 5_000, 25);
  t.equal(relay.relay.observer.stats().usage.http!.dropped, before.dropped, 'nothing dropped');
});
