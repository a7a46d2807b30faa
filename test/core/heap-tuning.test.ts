// `relay start` turns V8's allocation-site pretenuring off (core/cli/heap-tuning.ts). Seen from a
// child process given the same flag at run time: objects from one allocation site, most of which
// survive, are allocated straight into the old generation with pretenuring on, and young with it off;
// and from inside a running `relay start`, where they are allocated young.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { PRETENURING_OFF } from '../../core/cli/heap-tuning.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';
import { eventually } from '../../core/testing.ts';
import { startRelayProcess } from '../support/relay-process.ts';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const probeFile = path.join(fixtures, 'pretenuring-probe.mjs');

interface Seen { straightToOld: number; clean: number }

function probe(flag?: string): Promise<Seen> {
  return new Promise((resolve, reject) => {
    // Without what tap puts in every child's NODE_OPTIONS (it sets them whatever env says): its
    // hooks change when V8 first decides to pretenure.
    const args = ['-c', 'NODE_OPTIONS=; export NODE_OPTIONS; exec "$0" "$@"', process.execPath, probeFile, ...(flag ? [flag] : [])];
    execFile('/bin/sh', args, { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Seen);
    });
  });
}

t.test('with pretenuring on, surviving objects go straight to the old generation', async (t) => {
  // When V8 first decides to pretenure a site is its heuristic's to say: one of three runs will do.
  const runs: Seen[] = [];
  for (let run = 0; run < 3 && !runs.some((seen) => seen.straightToOld === 5); run++) runs.push(await probe());
  t.ok(runs.some((seen) => seen.straightToOld === 5), runs.map((seen) => `${seen.straightToOld} of ${seen.clean} batches went straight to the old generation`).join('; '));
});

t.test('with the flag relay start sets, the same objects are allocated young', async (t) => {
  const seen = await probe(PRETENURING_OFF);
  t.ok(seen.clean >= 100, `${seen.clean} batches without a scavenge`);
  t.ok(seen.straightToOld < 5, `${seen.straightToOld} of ${seen.clean} batches went straight to the old generation`);
});

t.test('relay start runs with pretenuring off: the probe inside the service allocates young', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-pretenuring-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'relay.yaml');
  writeFileSync(configFile, 'server: { host: 127.0.0.1 }\nlog: { level: warn }\nplugins:\n  - use: auth-bearer\n');
  const relay = await startRelayProcess({
    name: 'pretenuring', configFile, adminToken: 'pretenuring-admin-token',
    env: { DATABASE_URL: '', RELAY_MASTER_KEY: generateMasterKey() },
    nodeArgs: ['--import', path.join(fixtures, 'pretenuring-in-relay.mjs')],
  });
  t.teardown(() => relay.dispose());
  relay.child.kill('SIGUSR2');
  const probeLine = () => relay.output().split('\n').find((line) => line.startsWith('PROBE '));
  await eventually(() => probeLine() !== undefined, 60_000, 50);
  const seen = JSON.parse(probeLine()!.slice('PROBE '.length)) as Seen;
  t.ok(seen.clean >= 100, `${seen.clean} batches without a scavenge`);
  t.ok(seen.straightToOld < 5, `${seen.straightToOld} of ${seen.clean} batches went straight to the old generation`);
});
