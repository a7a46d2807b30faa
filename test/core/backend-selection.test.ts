// The config file selects the usage and payload backends (usageLogging.backend,
// payloadLogging.backend); start-up and `relay check` refuse a selection no loaded plugin
// provides, instead of dropping every event; the settings endpoints still switch at run time
// (issue 39 #1).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { StartupError } from '../../core/errors.ts';
import { declaredBackends } from '../../core/observer/backend-selection.ts';
import { DEFAULT_TEST_PLUGINS, startRelay } from '../../core/testing.ts';
import { relayCheck } from '../support/relay-check.ts';

const BASE_PLUGINS = [{ use: 'auth-bearer' }, { use: 'wire-vendor-a' }, { use: 'vendor-openai' }];

t.test('start-up refuses a selected usage backend that is not loaded, naming the loaded ones', async (t) => {
  const err = await startRelay({ plugins: [...BASE_PLUGINS, { use: 'log-postgres' }] }).then(
    async (relay) => { await relay.close(); return null; },
    (e: unknown) => e,
  );
  t.ok(err instanceof StartupError, 'a StartupError (one line, no stack)');
  t.match((err as Error).message, '/usageLogging/backend: the usage backend "file" is not loaded (loaded usage backends: postgres)');
  t.match((err as Error).message, 'set usageLogging.backend to one of them');

  const payload = await startRelay({ plugins: [...BASE_PLUGINS, { use: 'log-file' }, { use: 'payload-s3', options: { bucket: 'relay-payloads', endpoint: 'http://127.0.0.1:9' } }] })
    .then(async (relay) => { await relay.close(); return null; }, (e: unknown) => e);
  t.match((payload as Error)?.message, '/payloadLogging/backend: the payload backend "file" is not loaded (loaded payload backends: s3)');
});

t.test('the config selects the initial backends; the settings endpoints still switch them', async (t) => {
  const relay = await startRelay({
    plugins: [...BASE_PLUGINS, { use: 'log-file' }, { use: 'log-postgres' }, { use: 'payload-file' }],
    config: { usageLogging: { backend: 'postgres' } },
  });
  t.teardown(() => relay.close());
  t.same((await relay.api('GET', '/api/settings/usage-logging')).body, { backend: 'postgres' }, 'the config\'s choice, with nothing stored');
  t.equal(relay.relay.observer.usageBackend()?.id, 'postgres', 'events go to it');
  t.equal((await relay.api('GET', '/api/settings/payload-logging')).body.backend, 'file');

  const put = await relay.api('PUT', '/api/settings/usage-logging', { backend: 'file' });
  t.equal(put.status, 200);
  t.equal(relay.relay.observer.usageBackend()?.id, 'file', 'switched at run time');
  const refused = await relay.api('PUT', '/api/settings/usage-logging', { backend: 'clickhouse' });
  t.equal(refused.status, 400, 'a backend that is not loaded is still refused at run time');
});

t.test('what built-in plugins declare for relay check is what they register', async (t) => {
  const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'log-postgres' }, { use: 'payload-file' }] });
  t.teardown(() => relay.close());
  const declared = declaredBackends(relay.relay.plugins);
  const registered = relay.relay.observer.backends();
  t.same([...declared.usage].sort(), [...registered.usage].sort());
  t.same([...declared.payload].sort(), [...registered.payload].sort());
  t.same(declared.undeclared, []);
});

t.test('relay check refuses the same config, and names the selection when it is fine', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-backend-check-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'relay.yaml');
  const plugins = 'plugins:\n  - use: auth-bearer\n  - use: log-postgres\n  - use: payload-file\n';
  writeFileSync(file, plugins);
  const refused = await relayCheck(file, {});
  t.equal(refused.code, 1);
  t.equal(refused.err, `relay: ${file}: /usageLogging/backend: the usage backend "file" is not loaded (loaded usage backends: postgres); `
    + 'set usageLogging.backend to one of them, or load the plugin that provides "file"\n');
  t.equal(refused.out, '', 'no OK');

  writeFileSync(file, `usageLogging:\n  backend: postgres\n${plugins}`);
  const ok = await relayCheck(file, {});
  t.equal(ok.code, 0, ok.err);
  t.match(ok.out, `${file}: OK\nusage backend: postgres\npayload backend: file\n`);

  // An in-house backend plugin that declares no backends(): check cannot tell, so it notes it.
  // Compiled JavaScript that finds relay-gateway above it, as an in-house plugin is deployed.
  writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(path.resolve(import.meta.dirname, '../..'), path.join(dir, 'node_modules/relay-gateway'));
  writeFileSync(path.join(dir, 'sink.js'), [
    "import { definePlugin, Type } from 'relay-gateway';",
    "export default definePlugin({ name: 'log-sink', kind: 'log', options: Type.Object({}), register(relay) {",
    "  relay.hooks.addUsageBackend({ id: 'sink', async write() {} });",
    '} });',
  ].join('\n'));
  writeFileSync(file, `usageLogging:\n  backend: sink\n${plugins}  - use: ./sink.js\n`);
  const noted = await relayCheck(file, {});
  t.equal(noted.code, 0, noted.err);
  t.match(noted.out, `note: ${file}: /usageLogging/backend: the usage backend "sink" is not loaded`);
  t.match(noted.out, '(unless log-sink provides it: start-up checks)');
});
