// A caller that opens a long answer and stops reading it must not hold the upstream connection
// (and the host's connection cap) for as long as it likes: once a write has waited
// server.writeStallTimeoutMs for the socket to drain, the answer is cut, its upstream call closed
// and the request recorded as client_stalled. A client that reads slowly but keeps reading is not cut.
import t from 'tap';
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { eventually, startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, type ScriptedAction } from '../support/fake-upstream.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';

const STALL_MS = 800;
const relay = await startRelay({ config: { server: { writeStallTimeoutMs: STALL_MS } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'long-answer', shapes: ['openai.chat'] });
await routeLive(relay, seeded);

const FRAME = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'long-answer', choices: [{ index: 0, delta: { content: 'x'.repeat(16 * 1024) }, finish_reason: null }] })}\n\n`;

/** An SSE answer of `frames` frames (endless when null), written as fast as the connection takes them; `closed` says when its connection went. */
function longAnswer(frames: number | null, state: { closedAt: number | null; written: number }): ScriptedAction {
  return {
    kind: 'raw',
    handle(_req, res: ServerResponse) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => { state.closedAt = Date.now(); });
      const more = () => {
        while (!res.destroyed) {
          if (frames !== null && state.written >= frames) {
            res.end('data: [DONE]\n\n');
            return;
          }
          state.written++;
          if (!res.write(FRAME)) {
            res.once('drain', more);
            return;
          }
        }
      };
      more();
    },
  };
}

/** Sends a streamed chat request on a raw socket; the caller decides when (and whether) it reads. */
function openStream(): Promise<net.Socket> {
  const body = JSON.stringify({ model: 'long-answer', stream: true, messages: [{ role: 'user', content: 'write a lot' }] });
  const { port } = new URL(relay.inferenceUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: Number(port) }, () => {
      socket.write(`POST /vendor-a/v1/chat/completions HTTP/1.1\r\nhost: relay\r\nauthorization: Bearer ${seeded.relayKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

t.test('a client that stops reading is cut after the stall timeout, and the upstream call with it', async (t) => {
  const state = { closedAt: null as number | null, written: 0 };
  up.enqueue(longAnswer(null, state));
  const socket = await openStream();
  socket.pause();
  t.teardown(() => socket.destroy());
  // Once the socket buffers are full nothing more is taken from the upstream; then the stall timeout runs.
  await eventually(() => state.closedAt !== null, 30_000, 50);
  t.pass(`the upstream's connection was closed after ${state.written} frames of 16 KB`);
  let head = '';
  socket.on('data', (chunk: Buffer) => { if (head.length < 200) head += chunk.toString('latin1'); });
  socket.resume();
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  t.match(head, /^HTTP\/1\.1 200 /, 'the answer had begun');
  const requestId = /x-request-id: ([^\r]+)/.exec(head)?.[1];
  t.ok(requestId, 'the head names the request');
  const record = await usageRecord(relay, requestId!);
  t.equal(record.error_code, 'client_stalled', 'recorded as a client that stopped reading');
  t.equal(record.client_aborted, true, 'the client did not get the whole answer');
});

t.test('a client that reads slowly, but within the stall timeout each time, gets the whole answer', async (t) => {
  const state = { closedAt: null as number | null, written: 0 };
  up.enqueue(longAnswer(200, state));
  const socket = await openStream();
  t.teardown(() => socket.destroy());
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    // Pauses shorter than the stall timeout, between reads of at most a socket's buffer each.
    socket.pause();
    setTimeout(() => socket.resume(), STALL_MS / 4);
  });
  await eventually(() => received.includes('data: [DONE]'), 60_000, 50);
  t.equal(received.split('data: {').length - 1, 200, 'every frame arrived');
  t.ok(Date.now() - started > 2 * STALL_MS, 'over an answer that took longer than the stall timeout: the bound is on each wait, not the whole answer');
});
