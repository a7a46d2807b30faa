// An agent's turn streams for seconds to minutes, and its request body (hundreds of KB) is not
// needed once the answer's first byte went out (no failover after it). Relay lets go of it then
// (BodyBytes.release; the lean client once the body is written, and its cancel callback no longer
// keeps the caller's options): with many long streams open, their bodies are not in memory. Measured in this process (Relay runs in it), after a full
// collection, with every stream past its first byte and none finished.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import vm from 'node:vm';
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { routeLive } from '../support/relay-client.ts';
import { claudeCodeBody } from '../bench/agent-bodies.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const STREAMS = 24;
const BODY_BYTES = 400_000;

const relay = await startRelay();
// The fake upstream in a process of its own, so that only Relay's memory is in this one's figures.
// 20 frames 150 ms apart: each stream lasts ~3 s after its first byte.
const upstream = spawn(process.execPath, ['--import', 'tsx', 'test/bench/upstream-process.ts', '--chunks', '20', '--chunk-delay', '150'], { stdio: ['ignore', 'pipe', 'inherit'] });
const ready = (await once(createInterface({ input: upstream.stdout! }), 'line'))[0] as string;
const up = { url: ready.replace(/^READY /, '') };
t.teardown(async () => {
  await relay.close();
  upstream.kill('SIGTERM');
});
const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'long-stream-claude' });
await routeLive(relay, claude);
const body = claudeCodeBody(BODY_BYTES, 'long-stream-claude');
const url = new URL(relay.inferenceUrl);

interface OpenStream {
  firstByte: Promise<void>;
  done: Promise<string>;
}

/** Sends the turn; resolves `firstByte` at the answer's first body bytes, `done` with the whole answer. */
function openStream(): OpenStream {
  let firstByte!: () => void;
  const first = new Promise<void>((resolve) => (firstByte = resolve));
  const done = new Promise<string>((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, path: '/vendor-b/v1/messages', method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': claude.relayKey, 'content-length': body.length },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        firstByte();
      });
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  return { firstByte: first, done };
}

function externalBytes(): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

t.test(`${STREAMS} streams of ${BODY_BYTES / 1000} KB turns: their bodies are let go at the first byte`, async (t) => {
  const before = externalBytes();
  const streams = Array.from({ length: STREAMS }, openStream);
  await Promise.all(streams.map((s) => s.firstByte));
  const during = externalBytes();
  const held = during - before;
  t.ok(held < (STREAMS * BODY_BYTES) / 4, `${Math.round(held / 1024)} KB held outside the heap while ${STREAMS} streams run (their bodies: ${Math.round((STREAMS * BODY_BYTES) / 1024)} KB)`);
  const answers = await Promise.all(streams.map((s) => s.done));
  for (const answer of answers) t.match(answer, 'message_stop', 'each stream ran to its end', { diagnostic: false });
  t.equal(answers.length, STREAMS);
});
