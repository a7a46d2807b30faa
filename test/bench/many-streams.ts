// Thousands of long streams through one Relay: BENCH_STREAMS (5,000) Anthropic Messages streams
// held open at once, each BENCH_STREAM_SECONDS (20) long with a frame a second, through Relay to
// an upstream in this process. Prints errors, Relay's RSS at the peak, and the first byte's p50 and
// p99 through Relay beside the upstream's own (direct), for test/bench/RESULTS.md.
//   npx tsx test/bench/many-streams.ts
// Each stream holds a socket on the client, on both sides of Relay and on the upstream: this
// process needs twice BENCH_STREAMS file descriptors, Relay twice as many (ulimit -n).
import http from 'node:http';
import { Agent, request } from 'undici';
import { BENCH_MODELS, startRelayForBench } from './relay-target.ts';
import { sampleProc } from './proc.ts';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 5_000);
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 20);
/** New streams opened per second while ramping up (a burst of thousands of connects at once only measures the accept queue). */
const RAMP_PER_SECOND = Number(process.env.BENCH_RAMP ?? 1_000);

const frame = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** An Anthropic Messages upstream whose streams last SECONDS, a text delta a second. */
function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(frame('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: BENCH_MODELS.anthropic, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }));
      res.write(frame('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
      let sent = 0;
      const tick = setInterval(() => {
        if (res.destroyed) return clearInterval(tick);
        sent++;
        res.write(frame('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `tick ${sent} ` } }));
        if (sent < SECONDS) return;
        clearInterval(tick);
        res.write(frame('content_block_stop', { type: 'content_block_stop', index: 0 }));
        res.write(frame('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: SECONDS } }));
        res.end(frame('message_stop', { type: 'message_stop' }));
      }, 1_000);
    });
  });
  server.maxConnections = STREAMS * 2;
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as import('node:net').AddressInfo;
    resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) });
  }));
}

interface Outcome { firstByteMs: number; ok: boolean; error?: string }

/** One stream: the time to its first body byte, and whether it ended whole. */
async function oneStream(dispatcher: Agent, url: string, headers: Record<string, string>, body: string): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await request(url, { dispatcher, method: 'POST', headers, body, headersTimeout: 60_000, bodyTimeout: 60_000 });
    let firstByteMs = -1;
    let text = '';
    for await (const chunk of res.body) {
      if (firstByteMs < 0) firstByteMs = performance.now() - started;
      text += chunk.toString();
    }
    return { firstByteMs, ok: res.statusCode === 200 && text.includes('message_stop') };
  } catch (err) {
    return { firstByteMs: -1, ok: false, error: (err as Error).message };
  }
}

/** Opens STREAMS streams at RAMP_PER_SECOND and waits for all of them. */
async function run(label: string, url: string, headers: Record<string, string>, pid: number | null): Promise<{ outcomes: Outcome[]; peakRssMb: number }> {
  const dispatcher = new Agent({ connections: STREAMS, pipelining: 1 });
  const body = JSON.stringify({ model: BENCH_MODELS.anthropic, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hold on' }] });
  let peakRssMb = 0;
  const sampler = pid ? setInterval(() => { peakRssMb = Math.max(peakRssMb, sampleProc(pid).rssBytes / 1048576); }, 500) : undefined;
  const running: Array<Promise<Outcome>> = [];
  for (let i = 0; i < STREAMS; i++) {
    running.push(oneStream(dispatcher, url, headers, body));
    if ((i + 1) % Math.max(1, Math.floor(RAMP_PER_SECOND / 10)) === 0) await new Promise((r) => setTimeout(r, 100));
  }
  process.stderr.write(`${label}: ${STREAMS} streams opened\n`);
  const outcomes = await Promise.all(running);
  clearInterval(sampler);
  await dispatcher.close();
  return { outcomes, peakRssMb };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

function summary(outcomes: Outcome[]): { errors: number; p50: number; p99: number; firstErrors: string[] } {
  const times = outcomes.filter((o) => o.ok).map((o) => o.firstByteMs);
  const failed = outcomes.filter((o) => !o.ok);
  return { errors: failed.length, p50: percentile(times, 50), p99: percentile(times, 99), firstErrors: [...new Set(failed.map((o) => o.error ?? 'incomplete'))].slice(0, 3) };
}

const upstream = await startUpstream();
const relay = await startRelayForBench(upstream.url, { workDir: '.bench/many-streams', hostSpec: { maxConnections: STREAMS * 2 } });
try {
  const direct = summary((await run('direct', `${upstream.url}/v1/messages`, { 'content-type': 'application/json', 'x-api-key': 'bench' }, null)).outcomes);
  const through = await run('relay', `${relay.baseUrl}/vendor-b/v1/messages`, { 'content-type': 'application/json', 'x-api-key': relay.relayKey }, relay.pid);
  const viaRelay = summary(through.outcomes);
  const fmt = (n: number) => `${n.toFixed(1)} ms`;
  process.stdout.write([
    `${STREAMS} streams at once, ${SECONDS} s each (a frame a second), opened at ${RAMP_PER_SECOND}/s`,
    `| | errors | first byte p50 | first byte p99 | Relay peak RSS |`,
    `|---|---|---|---|---|`,
    `| direct | ${direct.errors} | ${fmt(direct.p50)} | ${fmt(direct.p99)} | |`,
    `| through Relay | ${viaRelay.errors} | ${fmt(viaRelay.p50)} | ${fmt(viaRelay.p99)} | ${through.peakRssMb.toFixed(0)} MB |`,
    `Relay's added first byte: p50 ${fmt(viaRelay.p50 - direct.p50)}, p99 ${fmt(viaRelay.p99 - direct.p99)}`,
    ...(viaRelay.errors > 0 ? [`errors: ${viaRelay.firstErrors.join('; ')}`] : []),
    '',
  ].join('\n'));
} finally {
  await relay.stop();
  await upstream.close();
}
