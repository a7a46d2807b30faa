// An agent's turn streams for seconds to minutes, and its request body (hundreds of KB) is not
// needed once the answer's first byte went out (no failover after it). Relay lets go of it then
// (BodyBytes.release; the lean client once the body is written, and its cancel callback no longer
// keeps the caller's options): with many long streams open, their bodies are not in memory. A
// translated turn also lets go of the request parsed and in the canonical shape
// (TranslationSource.release). Measured in this process (Relay runs in it), after a full
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
import { claudeCodeBody, codexBody } from '../bench/agent-bodies.ts';

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
const url = new URL(relay.inferenceUrl);

interface OpenStream {
  firstByte: Promise<void>;
  done: Promise<string>;
}

interface Turn {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

const claudeCodeTurn: Turn = { path: '/vendor-b/v1/messages', headers: { 'x-api-key': claude.relayKey }, body: claudeCodeBody(BODY_BYTES, 'long-stream-claude') };
// Codex's Responses turn to the same Messages upstream: translated both ways.
const codexTurn: Turn = { path: '/vendor-a/v1/responses', headers: { authorization: `Bearer ${claude.relayKey}` }, body: codexBody(BODY_BYTES, 'long-stream-claude') };

/** Sends the turn; resolves `firstByte` at the answer's first body bytes, `done` with the whole answer. */
function openStream({ path, headers, body }: Turn): OpenStream {
  let firstByte!: () => void;
  const first = new Promise<void>((resolve) => (firstByte = resolve));
  const done = new Promise<string>((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, path, method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers },
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

function heapBytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const kb = (bytes: number): number => Math.round(bytes / 1024);

t.test(`${STREAMS} streams of ${BODY_BYTES / 1000} KB turns: their bodies are let go at the first byte`, async (t) => {
  const before = externalBytes();
  const streams = Array.from({ length: STREAMS }, () => openStream(claudeCodeTurn));
  await Promise.all(streams.map((s) => s.firstByte));
  const during = externalBytes();
  const held = during - before;
  t.ok(held < (STREAMS * BODY_BYTES) / 4, `${kb(held)} KB held outside the heap while ${STREAMS} streams run (their bodies: ${kb(STREAMS * BODY_BYTES)} KB)`);
  const answers = await Promise.all(streams.map((s) => s.done));
  for (const answer of answers) t.match(answer, 'message_stop', 'each stream ran to its end', { diagnostic: false });
  t.equal(answers.length, STREAMS);
});

t.test(`${STREAMS} translated streams of ${BODY_BYTES / 1000} KB Codex turns: their parsed requests are let go at the first byte`, async (t) => {
  // Once, so that what a first translation builds for good (compiled code, caches) is in `before`.
  t.match(await openStream(codexTurn).done, 'response.completed', 'a first turn, translated');
  const before = heapBytes();
  const streams = Array.from({ length: STREAMS }, () => openStream(codexTurn));
  await Promise.all(streams.map((s) => s.firstByte));
  const held = heapBytes() - before;
  // Each parsed turn is ~385 KB of heap, and held with its canonical form it was ~520 KB a stream;
  // what stays is each stream's own state, the echoed tools included (~100 KB).
  t.ok(held < STREAMS * 250 * 1024, `${kb(held)} KB of heap held while ${STREAMS} translated streams run (${kb(held / STREAMS)} KB a stream)`);
  const answers = await Promise.all(streams.map((s) => s.done));
  for (const answer of answers) t.match(answer, 'response.completed', 'each stream ran to its end', { diagnostic: false });
  t.equal(answers.length, STREAMS);
});
