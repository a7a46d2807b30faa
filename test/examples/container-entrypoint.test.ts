// bin/container-entrypoint.sh, run with sh as the image runs it, against made-up cgroup trees: a
// 2048 MB heap ceiling for node when the container's memory is not limited, half the limit when
// that is less, nothing under a limit below 512 MB or when NODE_OPTIONS already sets one,
// RELAY_MAX_HEAP_MB honoured and checked, glibc's malloc told to keep freed memory (the operator's
// own values kept), the command exec'd with its arguments intact. What node is told is read back from V8 in the process the script runs.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(root, 'bin/container-entrypoint.sh');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'relay-entrypoint-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

/** A cgroup root holding `files` (path -> content). */
function cgroupRoot(name: string, files: Record<string, string>): string {
  const dir = path.join(tmp, name);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), `${content}\n`);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

const V2_UNLIMITED = cgroupRoot('v2-unlimited', { 'memory.max': 'max' });
const V2_LIMITED = cgroupRoot('v2-limited', { 'memory.max': String(512 * 1024 * 1024) });
const V1_UNLIMITED = cgroupRoot('v1-unlimited', { 'memory/memory.limit_in_bytes': '9223372036854771712' });
const V1_LIMITED = cgroupRoot('v1-limited', { 'memory/memory.limit_in_bytes': String(1024 * 1024 * 1024) });
const V2_LARGE = cgroupRoot('v2-large', { 'memory.max': String(8 * 1024 * 1024 * 1024) });
const V2_SMALL = cgroupRoot('v2-small', { 'memory.max': String(384 * 1024 * 1024) });
const V2_GARBLED = cgroupRoot('v2-garbled', { 'memory.max': '12x' });
const NONE = cgroupRoot('none', {});

interface Seen { code: number; stderr: string; nodeOptions: string | null; heapLimitMb: number; malloc: Record<string, string | null>; argv: string[] }

/** The --max-old-space-size values in what node saw, and the rest of NODE_OPTIONS. */
function options(seen: Seen): { ceilings: string[]; rest: string[] } {
  const words = (seen.nodeOptions ?? '').split(' ').filter((w) => w !== '');
  return {
    ceilings: words.filter((w) => w.startsWith('--max-old-space-size=')).map((w) => w.slice('--max-old-space-size='.length)),
    rest: words.filter((w) => !w.startsWith('--max-old-space-size=')),
  };
}

/** Runs the entrypoint with a node command that reports what it was given. */
function run(env: Record<string, string>, args: string[] = []): Promise<Seen> {
  const report = 'console.log(JSON.stringify({ nodeOptions: process.env.NODE_OPTIONS ?? null, heapLimitMb: require("v8").getHeapStatistics().heap_size_limit / 1048576, malloc: { mmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null, trimThreshold: process.env.MALLOC_TRIM_THRESHOLD_ ?? null }, argv: process.argv.slice(1) }))';
  // tap sets every child's NODE_OPTIONS itself, whatever env says: the test's value goes through
  // another variable, and a shell puts it in place just before the entrypoint runs.
  const { NODE_OPTIONS: given = '', ...rest } = env;
  // Only what a test gives reaches the script's malloc settings, whatever this process was started with.
  const { MALLOC_MMAP_THRESHOLD_: _mmap, MALLOC_TRIM_THRESHOLD_: _trim, ...inherited } = process.env;
  const setOptions = 'NODE_OPTIONS=$ENTRYPOINT_TEST_NODE_OPTIONS; export NODE_OPTIONS; exec /bin/sh "$0" "$@"';
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', setOptions, script, process.execPath, '-e', report, '--', ...args], { env: { ...inherited, ...rest, ENTRYPOINT_TEST_NODE_OPTIONS: given }, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? Number((err as { code?: number }).code ?? 1) : 0;
      const seen = code === 0 ? JSON.parse(stdout) : { nodeOptions: null, heapLimitMb: 0, malloc: {}, argv: [] };
      resolve({ code, stderr, ...seen });
    });
  });
}

t.test('no memory limit (cgroup v2 "max", v1 unlimited, no cgroup at all): node gets a 2048 MB ceiling', async (t) => {
  for (const [name, cgroup] of [['v2', V2_UNLIMITED], ['v1', V1_UNLIMITED], ['none', NONE]] as const) {
    const seen = await run({ RELAY_CGROUP_ROOT: cgroup });
    t.equal(seen.code, 0, `${name}: runs the command`);
    t.same(options(seen), { ceilings: ['2048'], rest: [] }, `${name}: NODE_OPTIONS`);
    // The heap limit counts young space too: a little over the old-space ceiling.
    t.ok(seen.heapLimitMb >= 2048 && seen.heapLimitMb < 2300, `${name}: V8's heap limit is ${Math.round(seen.heapLimitMb)} MB`);
  }
});

t.test('a memory limit on the container: half of it, at most 2048 MB', async (t) => {
  for (const [name, cgroup, ceiling] of [['v2, 512 MiB', V2_LIMITED, '256'], ['v1, 1 GiB', V1_LIMITED, '512'], ['v2, 8 GiB', V2_LARGE, '2048']] as const) {
    const seen = await run({ RELAY_CGROUP_ROOT: cgroup });
    t.equal(seen.code, 0);
    t.same(options(seen), { ceilings: [ceiling], rest: [] }, `${name}: NODE_OPTIONS`);
    t.ok(seen.heapLimitMb >= Number(ceiling) && seen.heapLimitMb < Number(ceiling) + 250, `${name}: V8's heap limit is ${Math.round(seen.heapLimitMb)} MB`);
  }
  const custom = await run({ RELAY_CGROUP_ROOT: V1_LIMITED, RELAY_MAX_HEAP_MB: '300' });
  t.same(options(custom).ceilings, ['300'], 'RELAY_MAX_HEAP_MB under half the limit wins');
  const off = await run({ RELAY_CGROUP_ROOT: V1_LIMITED, RELAY_MAX_HEAP_MB: '0' });
  t.same(options(off).ceilings, [], '0: V8 sizes its heap from the limit');
});

t.test('a limit under 512 MB, or one the script cannot read: V8 sizes its own heap, the script adds nothing', async (t) => {
  for (const [name, cgroup] of [['384 MiB', V2_SMALL], ['garbled', V2_GARBLED]] as const) {
    const seen = await run({ RELAY_CGROUP_ROOT: cgroup });
    t.equal(seen.code, 0, `${name}: runs the command`);
    t.same(options(seen), { ceilings: [], rest: [] }, `${name}: NODE_OPTIONS untouched`);
  }
});

t.test('RELAY_MAX_HEAP_MB sets the ceiling, 0 leaves V8 its own, anything else is refused', async (t) => {
  const custom = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, RELAY_MAX_HEAP_MB: '512' });
  t.same(options(custom).ceilings, ['512']);
  t.ok(custom.heapLimitMb >= 512 && custom.heapLimitMb < 700, `heap limit ${Math.round(custom.heapLimitMb)} MB`);
  const off = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, RELAY_MAX_HEAP_MB: '0' });
  t.same(options(off).ceilings, [], '0: no ceiling added');
  for (const bad of ['1g', '-1', ' 512', '0x10']) {
    const refused = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, RELAY_MAX_HEAP_MB: bad });
    t.equal(refused.code, 2, `${JSON.stringify(bad)}: exit 2`);
    t.match(refused.stderr, /RELAY_MAX_HEAP_MB must be a whole number of megabytes/, 'names the variable');
  }
});

t.test('NODE_OPTIONS: kept and added to, or left alone when it sets a ceiling itself', async (t) => {
  const added = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, NODE_OPTIONS: '--enable-source-maps' });
  t.same(options(added), { ceilings: ['2048'], rest: ['--enable-source-maps'] });
  const own = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, NODE_OPTIONS: '--max-old-space-size=300' });
  t.same(options(own).ceilings, ['300'], 'the operator\'s ceiling wins');
  t.ok(own.heapLimitMb < 500, `heap limit ${Math.round(own.heapLimitMb)} MB`);
});

t.test('glibc malloc keeps blocks up to 4 MB on its heap and up to 64 MB freed at its top; an operator\'s values win', async (t) => {
  const defaults = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED });
  t.same(defaults.malloc, { mmapThreshold: '4194304', trimThreshold: '67108864' });
  const empty = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, MALLOC_MMAP_THRESHOLD_: '', MALLOC_TRIM_THRESHOLD_: '' });
  t.same(empty.malloc, { mmapThreshold: '4194304', trimThreshold: '67108864' }, 'an empty value (glibc would read 0: every block from mmap) takes the default');
  const own = await run({ RELAY_CGROUP_ROOT: V2_UNLIMITED, MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '1048576' });
  t.same(own.malloc, { mmapThreshold: '131072', trimThreshold: '1048576' });
});

t.test('the command is exec\'d with its arguments as given', async (t) => {
  const seen = await run({ RELAY_CGROUP_ROOT: V2_LIMITED }, ['--config', '/etc/relay/my relay.yaml', '*', '$HOME']);
  t.same(seen.argv, ['--config', '/etc/relay/my relay.yaml', '*', '$HOME']);
});
