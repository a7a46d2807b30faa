// Relay's memory on its embedded default (PGlite in process, the shipped config/relay.yaml), as
// `npm start` runs it (the compiled build, no node flags), from a fresh data directory: resident
// memory while 64 streams run at once stays under RSS_BOUND_MB. It was 517 MB idle and 532 MB at
// 64 streams (903 MB peak at the first start); now 290-320 MB (core/db/pglite.ts says where it
// went; the README's "Memory" what is left). Postgres-backed Relay: ~130 MB. The 200 MB is not reached.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { seedRoute } from '../../core/testing.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { startRelayProcess } from '../support/relay-process.ts';

const RSS_BOUND_MB = 360;
const STREAMS = 64;
const root = path.resolve(import.meta.dirname, '../..');

/** Resident and peak resident memory of a process, in MB (Linux /proc). */
function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

t.test(`RSS on embedded PGlite stays under ${RSS_BOUND_MB} MB through ${STREAMS} concurrent streams`, { timeout: 180_000, skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  // A private compiled build: dist/ may be older than the sources here (then bin/relay.js would
  // run them through tsx, ~75 MB more), and other tests run the shared one.
  const build = path.join(root, 'test/.output', `rss-dist-${process.pid}`);
  execFileSync(process.execPath, [path.join(root, 'bin/build-server.mjs'), '--outdir', build], { stdio: 'ignore' });
  t.teardown(() => rmSync(build, { recursive: true, force: true }));

  const upstream = await startFakeUpstream({ chunks: 40, chunkDelayMs: 50, record: false });
  t.teardown(() => upstream.close());
  const relay = await startRelayProcess({
    name: 'rss', configFile: path.join(root, 'config/relay.yaml'), adminToken: `rss-${randomBytes(8).toString('hex')}`,
    entry: path.join(build, 'bin/relay-cli.js'),
    env: { DATABASE_URL: '', RELAY_MASTER_KEY: generateMasterKey(), RELAY_HOST: '127.0.0.1', RELAY_LOG_LEVEL: 'warn' },
  });
  t.teardown(() => relay.dispose());
  const pid = relay.child.pid!;
  const seeded = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'rss-model' });
  const idle = memoryMb(pid).rss;

  const stream = async () => {
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.relayKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'rss-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    return res.status === 200 && text.includes('data: [DONE]');
  };
  let highest = idle;
  const sampler = setInterval(() => { highest = Math.max(highest, memoryMb(pid).rss); }, 50);
  t.teardown(() => clearInterval(sampler));
  // Two rounds: the second shows what stays resident once the first round's garbage is reusable.
  for (let round = 1; round <= 2; round++) {
    const ok = await Promise.all(Array.from({ length: STREAMS }, stream));
    t.equal(ok.filter(Boolean).length, STREAMS, `round ${round}: every stream completed`);
  }
  clearInterval(sampler);
  const after = memoryMb(pid);
  t.comment(`RSS: ${idle} MB idle, ${highest} MB at most during the streams, ${after.rss} MB after (peak ${after.peak} MB)`);
  t.ok(highest < RSS_BOUND_MB, `RSS under ${RSS_BOUND_MB} MB during ${STREAMS} streams (highest ${highest} MB)`);
  t.ok(after.peak < RSS_BOUND_MB, `peak RSS (VmHWM) under ${RSS_BOUND_MB} MB (${after.peak} MB)`);
});
