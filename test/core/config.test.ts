import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfigFile, resolveConfig } from '../../core/config/load.ts';
import { StartupError } from '../../core/errors.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'relay-config-'));
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

t.test('defaults, ${ENV} substitution and env overrides', async (t) => {
  const f = file('ok.yaml', 'server:\n  port: ${MY_PORT}\n  host: ${MY_HOST:-127.0.0.1}\nplugins:\n  - use: auth-bearer\n');
  const { config, envNames } = loadConfigFile(f, { MY_PORT: '9000', RELAY_CONTROL_PORT: '9001' });
  t.same([...envNames].sort(), ['MY_HOST', 'MY_PORT'], 'the substituted variables, set or defaulted (host keys may not read them)');
  t.equal(config.server.port, 9000);
  t.equal(config.server.host, '127.0.0.1');
  t.equal(config.server.controlPort, 9001);
  t.equal(config.dataDir, './data');
  t.same(config.plugins, [{ use: 'auth-bearer', enabled: true }]);
});

t.test('JSON config files are read too', async (t) => {
  const f = file('ok.json', JSON.stringify({ server: { port: 1234 } }));
  t.equal(loadConfigFile(f, {}).config.server.port, 1234);
});

t.test('an unknown key is an error naming the file and the pointer', async (t) => {
  const f = file('typo.yaml', 'server:\n  prot: 8080\n');
  t.throws(() => loadConfigFile(f, {}), new StartupError(`${f}: /server/prot: unknown key "prot"`));
});

t.test('a wrong type names the pointer', async (t) => {
  const f = file('type.yaml', 'server:\n  port: eighty\n');
  t.throws(() => loadConfigFile(f, {}), { name: 'StartupError', message: new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: /server/port: `) });
});

t.test('an unset variable without default is an error', async (t) => {
  t.throws(() => resolveConfig({ database: { url: '${NOPE}' } }, {}, 'x.yaml'), { message: /x\.yaml: \/database\/url: environment variable NOPE is not set/ });
});

t.test('invalid YAML and a missing file are clear errors', async (t) => {
  const f = file('broken.yaml', 'server: [\n');
  t.throws(() => loadConfigFile(f, {}), { message: /not valid YAML/ });
  t.throws(() => loadConfigFile(path.join(dir, 'missing.yaml'), {}), { message: /cannot read the config file \(ENOENT\): no such file; name one with --config FILE or RELAY_CONFIG$/ });
});

t.test('a bad port in the environment is an error', async (t) => {
  t.throws(() => resolveConfig({}, { RELAY_PORT: 'abc' }, 'x.yaml'), { message: /RELAY_PORT=abc is not a port number/ });
});

t.test('config/relay.schema.json is up to date (npm run config:schema)', async (t) => {
  const { readFileSync } = await import('node:fs');
  const { configJsonSchema } = await import('../../core/config/write-schema.ts');
  const committed = readFileSync(new URL('../../config/relay.schema.json', import.meta.url), 'utf8');
  t.equal(committed, configJsonSchema());
});

t.test('the default config file is valid', async (t) => {
  const { config } = loadConfigFile(new URL('../../config/relay.yaml', import.meta.url).pathname, {});
  t.ok(config.plugins.length > 0);
});

t.test('the default config file reads the variables the README\'s table lists', async (t) => {
  const file = new URL('../../config/relay.yaml', import.meta.url).pathname;
  const { config } = loadConfigFile(file, {
    RELAY_TRUST_PROXY: 'true', RELAY_SECURE_COOKIES: 'true', RELAY_USAGE_BACKEND: 'postgres', RELAY_DRAIN_TIMEOUT_MS: '5000',
    RELAY_LOG_RETENTION_DAYS: '7', RELAY_PAYLOAD_RETENTION_DAYS: '3',
  });
  t.equal(config.server.trustProxy, true, 'RELAY_TRUST_PROXY');
  t.equal(config.admin.secureCookies, true, 'RELAY_SECURE_COOKIES');
  t.equal(config.usageLogging.backend, 'postgres', 'RELAY_USAGE_BACKEND');
  t.equal(config.server.drainTimeoutMs, 5000, 'RELAY_DRAIN_TIMEOUT_MS');
  const options = (name: string) => config.plugins.find((p) => p.use === name)?.options as { retentionDays?: unknown } | undefined;
  t.equal(Number(options('log-file')?.retentionDays), 7, "RELAY_LOG_RETENTION_DAYS (text: the plugin's schema coerces it)");
  t.equal(Number(options('payload-file')?.retentionDays), 3, 'RELAY_PAYLOAD_RETENTION_DAYS');
  const unset = loadConfigFile(file, {}).config;
  t.equal(unset.server.trustProxy, false, 'unset: off');
  t.equal(unset.admin.secureCookies, false, 'unset: off');
  t.equal(unset.usageLogging.backend, 'file', 'unset: file');
});

t.test('rateLimits.maxSlotHoldMs defaults to an hour and may not be shorter than the 10-minute slot lease', async (t) => {
  t.equal(resolveConfig({}, {}, 'x.yaml').rateLimits.maxSlotHoldMs, 3_600_000);
  t.equal(resolveConfig({ rateLimits: { maxSlotHoldMs: 600_000 } }, {}, 'x.yaml').rateLimits.maxSlotHoldMs, 600_000);
  t.throws(() => resolveConfig({ rateLimits: { maxSlotHoldMs: 599_999 } }, {}, 'x.yaml'), { name: 'StartupError', message: /^x\.yaml: \/rateLimits\/maxSlotHoldMs: / });
  t.throws(() => resolveConfig({ rateLimits: { maxSlotHoldMs: -1 } }, {}, 'x.yaml'), { message: /\/rateLimits\/maxSlotHoldMs/ });
});
