// An in-house plugin as an operator deploys it: Relay runs compiled (dist/) with no TypeScript
// loader and no resolve hook, so the plugin is JavaScript whose `relay-gateway` imports reach the
// running kernel's own modules through the package's exports (a plugin's RelayError is the
// kernel's RelayError: the client gets the plugin's code, not a 500). A TypeScript plugin under the
// compiled kernel is refused at start with the fix; from the sources (RELAY_FROM_SOURCE=1) it loads.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRelayProcess } from '../support/relay-process.ts';
import { compiledIsFresh } from '../../bin/compiled-build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

if (!compiledIsFresh(root)) throw new Error('dist/ is older than the sources: run `npm run build:server` (this test is about the compiled kernel)');

const PLUGIN = (ext: 'js' | 'ts') => `import { definePlugin, RelayError, Type } from 'relay-gateway';

export default definePlugin({
  name: 'auth-inhouse',
  kind: 'auth',
  description: 'Refuses requests that carry x-inhouse: deny (a test plugin).',
  options: Type.Object({}, { additionalProperties: false }),
  register(relay) {
    relay.hooks.addAuthenticator('auth-inhouse', (req) => {
      if (req.headers['x-inhouse'] === 'deny') throw new RelayError('RELAY_ERR_RELAY_KEY_INVALID', 'refused by the in-house ${ext} plugin');
      return null;
    }, 10);
  },
});
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-plugin-deploy-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// As in the container image (/node_modules/relay-gateway): the plugin finds Relay's package above it.
mkdirSync(path.join(dir, 'node_modules'));
symlinkSync(root, path.join(dir, 'node_modules/relay-gateway'));
writeFileSync(path.join(dir, 'package.json'), '{ "name": "inhouse-plugins", "private": true, "type": "module" }\n');
for (const ext of ['js', 'ts'] as const) {
  mkdirSync(path.join(dir, `inhouse-${ext}`));
  writeFileSync(path.join(dir, `inhouse-${ext}`, `index.${ext}`), PLUGIN(ext));
  writeFileSync(path.join(dir, `relay-${ext}.yaml`), ['server: { host: 127.0.0.1 }', 'log: { level: warn }', 'plugins:',
    `  - use: ./inhouse-${ext}`, '  - use: auth-bearer', '  - use: wire-vendor-a', '  - use: vendor-openai', ''].join('\n'));
}

async function refusal(inferenceUrl: string): Promise<{ status: number; body: { error?: { code?: string; message?: string } } }> {
  const res = await fetch(`${inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-inhouse': 'deny' }, body: '{"model":"m","messages":[]}',
  });
  return { status: res.status, body: await res.json() as { error?: { code?: string; message?: string } } };
}

t.test('a JavaScript plugin loads under the compiled kernel and throws the kernel\'s own RelayError', { timeout: 120_000 }, async (t) => {
  const relay = await startRelayProcess({ name: 'plugin-js', configFile: path.join(dir, 'relay-js.yaml'), adminToken: 'plugin-deploy-admin', env: { DATABASE_URL: '', RELAY_FROM_SOURCE: '' } });
  t.teardown(() => relay.dispose());
  const { status, body } = await refusal(relay.inferenceUrl);
  t.equal(status, 401, relay.output());
  t.equal(body.error?.code, 'RELAY_ERR_RELAY_KEY_INVALID');
  t.equal(body.error?.message, 'refused by the in-house js plugin');
  const plain = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(plain.status, 401, 'without the header the plugin passes and auth-bearer asks for a key');
});

t.test('a TypeScript plugin under the compiled kernel is refused at start, naming the fix', { timeout: 60_000 }, async (t) => {
  const child = spawn(process.execPath, [path.join(root, 'bin/relay.js'), 'start', '--config', path.join(dir, 'relay-ts.yaml')], {
    cwd: root, env: { ...process.env, DATABASE_URL: '', RELAY_FROM_SOURCE: '', RELAY_DATA_DIR: path.join(dir, 'data-ts') }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.equal(code, 1);
  const file = path.join(dir, 'inhouse-ts/index.ts');
  t.equal(stderr.trim(), `relay: ${path.join(dir, 'relay-ts.yaml')}: /plugins/0/use: plugin "./inhouse-ts" is TypeScript (${file}), and Relay runs compiled JavaScript: ` +
    'compile the plugin (tsc; see plugins/README.md, "Deploying an in-house plugin"), or run Relay from its sources with RELAY_FROM_SOURCE=1 while developing it');
  t.notMatch(stderr, /\n\s+at /, 'no stack trace');
});

t.test('from the sources (development) the TypeScript plugin loads and shares the kernel\'s modules', { timeout: 180_000 }, async (t) => {
  const relay = await startRelayProcess({
    name: 'plugin-ts', configFile: path.join(dir, 'relay-ts.yaml'), adminToken: 'plugin-deploy-admin', env: { DATABASE_URL: '', RELAY_FROM_SOURCE: '1' }, startTimeoutMs: 150_000,
  });
  t.teardown(() => relay.dispose());
  const { status, body } = await refusal(relay.inferenceUrl);
  t.equal(status, 401, relay.output());
  t.equal(body.error?.code, 'RELAY_ERR_RELAY_KEY_INVALID');
  t.equal(body.error?.message, 'refused by the in-house ts plugin');
});
