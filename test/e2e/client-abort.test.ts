// The two ways a request ends early: the client goes away (Relay aborts its upstream request and
// records client_aborted), and the upstream stalls (Relay gives up after the host's timeoutMs).
import t from 'tap';
import { recordFaultCounters } from '../support/fault-counters.ts';
import type { ServerResponse } from 'node:http';
import { startRelay, seedRoute, eventually, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, openai, type FakeUpstream, type RawAction } from '../support/fake-upstream.ts';
import { viaRelay, usageRecord, hostKeyHealth, setBindingWeights, settled, readThenAbort } from '../support/relay-client.ts';

const relay = await startRelay();
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await recordFaultCounters('client-abort', relay, upstreams);
  await relay.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

async function fake(): Promise<FakeUpstream> {
  const up = await startFakeUpstream();
  upstreams.push(up);
  return up;
}

let seq = 0;
async function seed(up: FakeUpstream, adapter: 'openai' | 'anthropic' = 'openai', model = `abort-${++seq}`, hostKeys?: string[]): Promise<Seeded> {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter, model, ...(hostKeys ? { hostKeys } : {}) });
  await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length > 0
    && snap.models.get(s.modelId)?.spec.bindings.some((b) => b.hostId === s.hostId) === true);
  return s;
}

async function setTimeoutMs(hostId: string, timeoutMs: number): Promise<void> {
  const res = await relay.api('PUT', `/api/hosts/by-id/${hostId}`, { spec: { timeoutMs } });
  if (res.status !== 200) throw new Error(`host timeout: ${res.status} ${JSON.stringify(res.body)}`);
  await settled(relay, (snap) => snap.hosts.get(hostId)?.spec.timeoutMs === timeoutMs);
}

interface Watched {
  action: RawAction;
  /** Resolves when the upstream's socket to Relay closes, with whether the stream had ended. */
  closed: Promise<{ finished: boolean; framesSent: number }>;
}

/** An SSE answer written one frame every `everyMs`, watching for Relay to hang up. */
function slowStream(frames: string[], everyMs: number, firstAfterMs = everyMs): Watched {
  let report!: (r: { finished: boolean; framesSent: number }) => void;
  const closed = new Promise<{ finished: boolean; framesSent: number }>((resolve) => { report = resolve; });
  const action: RawAction = {
    kind: 'raw',
    handle(_req, res: ServerResponse) {
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      res.on('close', () => {
        clearTimeout(timer);
        report({ finished: res.writableFinished, framesSent: sent });
      });
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.flushHeaders();
      const next = () => {
        if (res.destroyed) return;
        if (sent === frames.length) return res.end();
        res.write(frames[sent++]);
        timer = setTimeout(next, everyMs);
      };
      timer = setTimeout(next, firstAfterMs);
    },
  };
  return { action, closed };
}


t.test('a client that disconnects mid-stream aborts its upstream request (passthrough)', async (t) => {
  const up = await fake();
  const s = await seed(up);
  const frames = openai.chatChunks({ model: s.modelSlug, chunks: 40 });
  const watched = slowStream(frames, 50);
  up.enqueue(watched.action);
  const { requestId, text } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey,
    { model: s.modelSlug, stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.split('\n\n').length > 4);
  t.ok(text.startsWith(frames[0]!), 'the client got the start of the stream');
  const closed = await watched.closed;
  t.notOk(closed.finished, 'the upstream socket closed before the stream ended');
  t.ok(closed.framesSent < frames.length, `the upstream stopped early (${closed.framesSent} of ${frames.length} frames)`);
  const record = await usageRecord(relay, requestId);
  t.equal(record.client_aborted, true, 'recorded as client_aborted');
  t.equal(record.error_code, 'client_aborted');
  t.equal(record.status, 200, 'the status the client had been sent');
  // The other request is the prompt's count (the cut answer had no usage): cut-answer-usage.test.ts.
  t.same(up.requests.map((r) => r.pathname), ['/v1/chat/completions', '/v1/responses/input_tokens'], 'no second attempt');
});

t.test('a client that disconnects mid-stream aborts its upstream request (translated)', async (t) => {
  const up = await fake();
  const s = await seed(up, 'openai');
  const frames = openai.chatChunks({ model: s.modelSlug, chunks: 40 });
  const watched = slowStream(frames, 50);
  up.enqueue(watched.action);
  const { requestId } = await readThenAbort(relay, '/vendor-b/v1/messages', s.relayKey,
    { model: s.modelSlug, stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.includes('content_block_delta'));
  const closed = await watched.closed;
  t.notOk(closed.finished, 'the upstream socket closed before the stream ended');
  const record = await usageRecord(relay, requestId);
  t.equal(record.client_aborted, true);
  t.equal(record.error_code, 'client_aborted');
});

t.test('a client that leaves while Relay still holds the opening frames aborts the upstream too', async (t) => {
  const up = await fake();
  const s = await seed(up);
  const opening = openai.responseEvents({ model: s.modelSlug }).slice(0, 2);
  // Opening frames only, then silence: Relay is holding them back, nothing reached the client.
  const watched = slowStream([...opening, ...Array(20).fill(': keep-alive\n\n')], 100, 0);
  up.enqueue(watched.action);
  const controller = new AbortController();
  const pending = fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', signal: controller.signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${s.relayKey}` },
    body: JSON.stringify({ model: s.modelSlug, input: 'hi', stream: true }),
  }).catch((err: Error) => err);
  await up.waitForRequests(1);
  await new Promise((r) => setTimeout(r, 150));
  controller.abort();
  t.type(await pending, Error, 'the client gave up before any byte');
  const closed = await watched.closed;
  t.notOk(closed.finished, 'the upstream request was aborted');
  let record: any;
  await eventually(async () => {
    const logs = (await relay.api('GET', '/api/logs?limit=20')).body;
    record = (logs.items ?? logs.data ?? logs).find?.((r: { model_requested?: string }) => r.model_requested === s.modelSlug);
    return record !== undefined;
  });
  t.equal(record.client_aborted, true);
  t.equal(record.error_code, 'client_aborted');
  t.equal(record.status, 499, 'nothing was sent: recorded as 499');
});

t.test('a stalled upstream (headers never come) times out per host.timeoutMs with 502', async (t) => {
  const up = await fake();
  const s = await seed(up);
  await setTimeoutMs(s.hostId, 400);
  up.enqueue({ kind: 'stall' });
  const started = Date.now();
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, { model: s.modelSlug, messages: [{ role: 'user', content: 'hi' }] });
  const took = Date.now() - started;
  t.equal(got.status, 502, "SPEC: an upstream that cannot be reached in time is a 502");
  t.ok(took >= 350 && took < 3_000, `gave up after about timeoutMs (${took} ms)`);
  const body = JSON.parse(got.text);
  t.match(body, { error: { code: 'RELAY_ERR_UPSTREAM_TIMEOUT', type: 'timeout_error' } }, "in the caller's shape");
  t.match(got.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  const health = (await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)!;
  t.equal(health.state, 'healthy', 'one timeout does not take the key out of rotation (only a run of them opens its circuit)');
});

t.test('a stalled first host fails over to the next one before the first byte', async (t) => {
  const stalled = await fake();
  const good = await fake();
  const a = await seed(stalled, 'anthropic');
  const b = await seed(good, 'anthropic', a.modelSlug);
  await setTimeoutMs(a.hostId, 300);
  await setBindingWeights(relay, a.modelId, { [a.hostId]: 1000, [b.hostId]: 1 });
  await settled(relay, (snap) => snap.models.get(a.modelId)?.spec.bindings.find((x) => x.hostId === a.hostId)?.weight === 1000);
  stalled.script(() => ({ kind: 'stall' }));
  const ask = () => viaRelay(relay, '/vendor-b/v1/messages', a.relayKey, { model: a.modelSlug, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  let got = await ask();
  // Order is weighted random (1000:1): in the rare draw where the good host came first, ask again.
  for (let i = 0; i < 2 && stalled.count === 0; i++) got = await ask();
  t.equal(got.status, 200);
  t.equal(stalled.count, 1, 'the stalled host was tried first');
});

t.test('an upstream that stalls mid-stream is cut after timeoutMs, not left hanging', async (t) => {
  const up = await fake();
  const s = await seed(up);
  await setTimeoutMs(s.hostId, 400);
  const frames = openai.chatChunks({ model: s.modelSlug, chunks: 5 });
  up.enqueue({ headers: { 'content-type': 'text/event-stream' }, frames: frames.slice(0, 3), then: 'stall' });
  const started = Date.now();
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.relayKey}` },
    body: JSON.stringify({ model: s.modelSlug, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 200);
  const cut = await res.arrayBuffer().then(() => false, () => true);
  t.ok(cut, 'the client sees the stream break');
  t.ok(Date.now() - started < 3_000, 'within about timeoutMs');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.error_code, 'upstream_stream_error');
  t.equal(record.client_aborted, false);
});

t.test('a client that closes right after the last frame: the answer was whole, so it is no abort', async (t) => {
  const up = await fake();
  const s = await seed(up);
  const net = await import('node:net');
  const body = JSON.stringify({ model: s.modelSlug, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
  const { port } = new URL(relay.inferenceUrl);
  const requestId = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let seen = '';
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      // Codex closes its connection as soon as it has the last frame, before reading any more.
      if (seen.includes('data: [DONE]')) {
        socket.destroy();
        resolve(/x-request-id: ([0-9a-f-]+)/i.exec(seen)?.[1] ?? '');
      }
    });
    socket.on('error', reject);
    socket.write(`POST /vendor-a/v1/chat/completions HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\nauthorization: Bearer ${s.relayKey}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
  t.ok(requestId, 'the answer carried its request id');
  const record = await usageRecord(relay, requestId);
  t.equal(record.status, 200);
  t.equal(record.client_aborted, false, 'not logged as client_aborted');
  t.equal(record.error_code, null);
});
