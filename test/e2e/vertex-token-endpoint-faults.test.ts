// A Vertex host's token endpoint that fails (a 5xx with a long description, an answer far larger
// than any token) is reported as the token endpoint's failure: capped, and never read whole.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_TEST_PLUGINS, seedRoute, startRelay } from '../../core/testing.ts';
import { serviceAccountKey } from '../support/fake-google.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';

const LONG = 'x'.repeat(20_000);
let answer: (res: import('node:http').ServerResponse) => void = () => undefined;
let answeredWhole = false;
const tokenServer: Server = createServer((req, res) => {
  req.resume();
  req.on('end', () => answer(res));
});
await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'vendor-google' }] });
t.teardown(async () => {
  await relay.close();
  tokenServer.closeAllConnections();
  await new Promise((resolve) => tokenServer.close(resolve));
});

const account = serviceAccountKey();
const vertex = await seedRoute(relay, {
  baseUrl: 'http://127.0.0.1:9/v1', adapter: 'google', model: 'gemini-vertex-faults', upstreamModel: 'gemini-2.5-pro',
  hostKeys: [account.json], hostOptions: { mode: 'vertex', project: 'acme-prod', location: 'us-central1', tokenUrl },
});
await routeLive(relay, vertex);

async function chat(): Promise<{ status: number; text: string; requestId: string }> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${vertex.relayKey}` },
    body: JSON.stringify({ model: 'gemini-vertex-faults', messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id')! };
}

t.test('a 5xx with a long description is a 502 whose message is capped', async (t) => {
  answer = (res) => {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: LONG }));
  };
  const res = await chat();
  t.equal(res.status, 502, res.text);
  const message = JSON.parse(res.text).error.message as string;
  t.match(message, /token endpoint/i, 'the message says the token endpoint failed');
  t.ok(message.length < 600, `the message is capped (${message.length} characters)`);
  const health = await relay.api<any>('GET', `/api/host-keys/${vertex.hostKeyIds[0]}`);
  t.ok(JSON.stringify(health.body).length < 5_000, 'the key health reason viewers read is capped too');
  await usageRecord(relay, res.requestId);
});

t.test('an answer of many megabytes is not read whole', async (t) => {
  answer = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let left = 1024; // 64 MiB of spaces, then never a token
    const pump = (): void => {
      while (left > 0) {
        left--;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      answeredWhole = true;
      res.end();
    };
    res.write('{"access_token":"');
    pump();
  };
  const res = await chat();
  t.equal(res.status, 502, res.text);
  t.match(JSON.parse(res.text).error.message, /token endpoint/i);
  t.notOk(answeredWhole, 'Relay closed the connection before the answer was whole');
});
