// examples/config/: `relay check` accepts each config file with its environment variables set
// to dummy values, and the scaled setup refuses to start without the database it needs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadConfigFile } from '../../core/config/load.ts';
import { DUMMY_ENV, relayCheck } from '../support/relay-check.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const EXPECTED_PLUGINS: Record<string, string[]> = {
  'embedded.yaml': ['auth-bearer', 'wire-vendor-a', 'wire-vendor-b', 'vendor-openai', 'vendor-anthropic', 'log-file', 'payload-file', 'admin-ui', 'vendor-google', 'vendor-azure-openai', 'vendor-bedrock'],
  'scaled.yaml': ['auth-bearer', 'wire-vendor-a', 'wire-vendor-b', 'vendor-openai', 'vendor-anthropic', 'log-clickhouse', 'log-postgres', 'log-valkey', 'payload-s3', 'admin-ui', 'vendor-google', 'vendor-azure-openai', 'vendor-bedrock'],
};

for (const [file, plugins] of Object.entries(EXPECTED_PLUGINS)) {
  t.test(`relay check accepts examples/config/${file}`, async (t) => {
    const configFile = path.join(root, 'examples/config', file);
    const res = await relayCheck(configFile, DUMMY_ENV);
    t.equal(res.code, 0, res.err);
    t.match(res.out, `${configFile}: OK`);
    for (const name of plugins) t.match(res.out, new RegExp(`^  ${name} \\[`, 'm'), `loads ${name}`);
  });
}

t.test('scaled.yaml without DATABASE_URL is refused, naming the variable', async (t) => {
  const configFile = path.join(root, 'examples/config/scaled.yaml');
  const res = await relayCheck(configFile, { ...DUMMY_ENV, DATABASE_URL: undefined });
  t.equal(res.code, 1);
  t.match(res.err, `${configFile}: /database/url: environment variable DATABASE_URL is not set`);
});

t.test('the values come from the environment', async (t) => {
  const res = await relayCheck(path.join(root, 'examples/config/scaled.yaml'), { ...DUMMY_ENV, S3_BUCKET: 'bucket-from-env', RELAY_LOG_RETENTION_DAYS: '7' });
  t.equal(res.code, 0, res.err);
  t.match(res.out, 'bucket: "bucket-from-env"');
  t.match(res.out, /log-clickhouse[\s\S]*ttlDays: 7\n/);
});

t.test('scaled.yaml selects backends it loads: ClickHouse (or RELAY_USAGE_BACKEND) and S3', async (t) => {
  const file = path.join(root, 'examples/config/scaled.yaml');
  const res = await relayCheck(file, DUMMY_ENV);
  t.match(res.out, 'usage backend: clickhouse\npayload backend: s3\n', 'not the file backend it does not load');
  const postgres = await relayCheck(file, { ...DUMMY_ENV, RELAY_USAGE_BACKEND: 'postgres' });
  t.match(postgres.out, 'usage backend: postgres\n');
  const missing = await relayCheck(file, { ...DUMMY_ENV, RELAY_USAGE_BACKEND: 'file' });
  t.equal(missing.code, 1, 'a backend the file does not load is refused');
  t.match(missing.err, '/usageLogging/backend: the usage backend "file" is not loaded (loaded usage backends: clickhouse, postgres, valkey)');
});

t.test('scaled.yaml without ClickHouse: its disabled plugin needs none of the CLICKHOUSE_* variables', async (t) => {
  const file = path.join(root, 'examples/config/scaled.yaml');
  const env = { ...DUMMY_ENV, CLICKHOUSE_URL: undefined, CLICKHOUSE_PASSWORD: undefined, RELAY_USAGE_BACKEND: 'postgres' };
  const needed = await relayCheck(file, env);
  t.equal(needed.code, 1, 'loaded, the plugin still needs its URL');
  t.match(needed.err, '/plugins/8/options/url: environment variable CLICKHOUSE_URL is not set');
  const without = await relayCheck(file, { ...env, RELAY_CLICKHOUSE_ENABLED: 'false' });
  t.equal(without.code, 0, without.err);
  t.match(without.out, 'usage backend: postgres\n');
  t.notMatch(without.out, /^  log-clickhouse \[/m, 'not loaded');
  const stillSelected = await relayCheck(file, { ...DUMMY_ENV, CLICKHOUSE_URL: undefined, RELAY_CLICKHOUSE_ENABLED: 'false' });
  t.equal(stillSelected.code, 1, 'disabled while it is the selected backend: refused');
  t.match(stillSelected.err, 'the usage backend "clickhouse" is not loaded');
});

t.test('the scaled setup marks the session cookie Secure by default, and trusts its load balancer', async (t) => {
  const { config } = loadConfigFile(path.join(root, 'examples/config/scaled.yaml'), DUMMY_ENV);
  t.equal(config.admin.secureCookies, true, 'secure by default');
  t.equal(config.server.trustProxy, true);
  const optedOut = loadConfigFile(path.join(root, 'examples/config/scaled.yaml'), { ...DUMMY_ENV, RELAY_SECURE_COOKIES: 'false' });
  t.equal(optedOut.config.admin.secureCookies, false, 'RELAY_SECURE_COOKIES=false turns it off');
});
