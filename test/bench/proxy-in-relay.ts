// What part of Relay's cost per request is its own work, and what part is a larger process: the
// bare proxy (node-proxy.ts's logic, test/bench/proxy-preload.mjs) measured alone, then inside a
// running Relay (loaded with --import, on its own port), then Relay itself, then the proxy again.
// Chat at 16 connections, 5 s each, the processes pinned as in run.ts.
//   npx tsx test/bench/proxy-in-relay.ts        (CASE=messages-stream for another case)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { spawnPinned, stopChild, pinSelf, freePort } from './processes.ts';
import { startRelayForBench } from './relay-target.ts';
import { runWrk, type WrkRequest } from './wrk.ts';
import { sampleProc } from './proc.ts';
import { CASES, vendorAuthHeaders } from './cases.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const [GATEWAY_CPU, LOAD_CPU] = ['0', '1'];
pinSelf(LOAD_CPU);

function readyUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve) => {
    let seen = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (text: string) => {
      seen += text;
      const line = seen.split('\n').find((l) => l.startsWith('READY '));
      if (line) resolve(line.slice('READY '.length).trim());
    });
  });
}

async function measure(label: string, pid: number, req: WrkRequest): Promise<void> {
  await runWrk(req, { connections: 16, durationS: 2, cpu: LOAD_CPU }, '.bench/wrk');
  const before = sampleProc(pid);
  const run = await runWrk(req, { connections: 16, durationS: 5, cpu: LOAD_CPU }, '.bench/wrk');
  const after = sampleProc(pid);
  const cpu = (after.cpuUs - before.cpuUs) / run.requests;
  console.log(`${label.padEnd(28)} ${Math.round(run.rps).toLocaleString('en-US').padStart(7)} req/s  ${cpu.toFixed(1).padStart(6)} us CPU per request  ${run.errors.status} non-2xx`);
}

const benchCase = CASES.find((c) => c.id === (process.env.CASE ?? 'chat'));
if (!benchCase || benchCase.client.body !== benchCase.direct.body) throw new Error('CASE must be a passthrough case of cases.ts');
const upstream = spawnPinned(LOAD_CPU, process.execPath, ['--import', 'tsx', path.join(here, 'upstream-process.ts'), '--chunks', '20'], {});
const upstreamUrl = await readyUrl(upstream);
const direct = (base: string): WrkRequest => ({
  url: base + benchCase.direct.path, headers: { 'content-type': 'application/json', ...vendorAuthHeaders(benchCase.direct.vendor) }, body: JSON.stringify(benchCase.direct.body),
});

const proxy = spawnPinned(GATEWAY_CPU, process.execPath, ['--import', 'tsx', path.join(here, 'node-proxy.ts'), '--upstream', upstreamUrl], {});
await measure('bare proxy, its own process', proxy.pid!, direct(await readyUrl(proxy)));
await stopChild(proxy);

const port = await freePort();
process.env.PROXY_PRELOAD_UPSTREAM = upstreamUrl;
process.env.PROXY_PRELOAD_PORT = String(port);
const relay = await startRelayForBench(upstreamUrl, { cpu: GATEWAY_CPU, workDir: '.bench/proxy-in-relay', nodeArgs: ['--import', path.join(here, 'proxy-preload.mjs')] });
const viaRelay: WrkRequest = {
  url: relay.baseUrl + { chat: '/vendor-a/v1/chat/completions', embeddings: '/vendor-a/v1/embeddings', messages: '/vendor-b/v1/messages', responses: '/vendor-a/v1/responses' }[benchCase.client.shape],
  headers: { 'content-type': 'application/json', authorization: `Bearer ${relay.relayKey}`, ...(benchCase.client.shape === 'messages' ? { 'anthropic-version': '2023-06-01' } : {}) },
  body: JSON.stringify(benchCase.client.body),
};
await measure('bare proxy inside idle Relay', relay.pid, direct(`http://127.0.0.1:${port}`));
await measure('Relay', relay.pid, viaRelay);
await measure('bare proxy inside Relay, after', relay.pid, direct(`http://127.0.0.1:${port}`));
await relay.stop();
await stopChild(upstream);
process.exit(0);
