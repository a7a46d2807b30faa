// `npm run test:summary`: what the reliability and security tests did, from the counters they
// leave in test/.output/*.json (see counters.ts): faults injected, bad inputs tried, usage events
// lost (must be zero within the bound), secrets searched and found (must be zero).
// `--run` runs the security tests first; otherwise it reads what the last `npm test` left.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { OUTPUT_DIR, type Counters } from './counters.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The tests this summary is about; a missing file is reported, not skipped silently. */
const EXPECTED = ['failover', 'errors', 'client-abort', 'fuzz-inference', 'fuzz-codecs', 'fuzz-control', 'secret-leak'];

if (process.argv.includes('--run')) {
  const files = readdirSync(import.meta.dirname).filter((f) => f.endsWith('.test.ts')).map((f) => path.join('test/security', f));
  const run = spawnSync('npx', ['tap', ...files], { cwd: ROOT, stdio: 'inherit' });
  if (run.status !== 0) process.stdout.write(`\nthe security tests failed (exit ${run.status}); the counters below are what they wrote\n`);
}

interface Report { test: string; writtenAt: string; counters: Counters }
const reports: Report[] = existsSync(OUTPUT_DIR)
  ? readdirSync(OUTPUT_DIR).filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(path.join(OUTPUT_DIR, f), 'utf8')) as Report)
  : [];

const sum = (key: keyof Counters) => reports.reduce((n, r) => n + (r.counters[key] ?? 0), 0);
const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(28)}${value}\n`);

process.stdout.write('Relay reliability and security tests\n\n');
for (const r of reports.sort((a, b) => a.test.localeCompare(b.test))) {
  const shown = Object.entries(r.counters).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`).join(' ');
  line(`  ${r.test}`, `${shown}  (${r.writtenAt})`);
}
const missing = EXPECTED.filter((name) => !reports.some((r) => r.test === name));
if (missing.length > 0) line('  not reported', `${missing.join(', ')} (no test/.output/<name>.json: not run yet, or the test writes no counters)`);

const lost = sum('eventsLost');
const leaks = sum('leaks');
process.stdout.write('\n');
line('faults injected', String(sum('faultsInjected')));
line('bad inputs tried', String(sum('badInputs')));
line('usage events lost', `${lost} of ${sum('eventsExpected')} expected${lost === 0 ? ' (zero, within the bound)' : ''}`);
line('secrets found in output', `${leaks} (${sum('secretsChecked')} secrets, ${sum('placesSearched')} places searched)`);
process.exitCode = lost > 0 || leaks > 0 ? 1 : 0;
