// What `npm install` brings: Relay's own dependencies only. The test-only clients and engines
// (the Codex CLI, Claude Code, chdb: about 1.2 GB) are in test/tools, which `npm test` installs;
// log-clickhouse's embedded mode, the one runtime use of chdb, says how to install it when missing.
import t from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { CHDB_INSTALL_HINT } from '../../plugins/log-clickhouse/client.ts';

const root = path.resolve(import.meta.dirname, '../..');
const readJson = (file: string) => JSON.parse(readFileSync(path.join(root, file), 'utf8'));
const TEST_TOOLS = ['@anthropic-ai/claude-code', '@openai/codex', 'chdb'];

t.test('the test tools are in test/tools/package.json and in none of Relay\'s own dependency lists', async (t) => {
  const pkg = readJson('package.json');
  const tools = readJson('test/tools/package.json');
  for (const name of TEST_TOOLS) {
    t.ok(tools.dependencies[name], `${name} in test/tools`);
    for (const list of ['dependencies', 'devDependencies', 'optionalDependencies']) t.notOk(pkg[list]?.[name], `${name} not in ${list}`);
    t.notOk(readJson('package-lock.json').packages[`node_modules/${name}`], `${name} not in the lock file`);
  }
  t.match(pkg.scripts.pretest, /test\/tools\/install\.mjs/, 'npm test installs them first');
});

t.test('log-clickhouse embedded without chdb installed: start-up fails saying how to install it', async (t) => {
  // A process without the tests' resolve hook (test/tools/register.mjs): Relay's node_modules alone.
  const script = `import { openClickHouse } from './plugins/log-clickhouse/client.ts';
    openClickHouse({ url: '', database: 'default', embedded: { path: ':memory:' } })
      .then(() => console.log('opened'), (err) => console.log(err.message));`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { cwd: root, env });
  t.equal(stdout.trim(), CHDB_INSTALL_HINT);
  t.match(CHDB_INSTALL_HINT, /npm install chdb@3\.4/);
});
