// The OpenAPI document (valid, complete, typed, with security), settings, /config.json,
// /api/version, /api/reload and /api/master-key/generate.
import t from 'tap';
import type { RouteOptions } from 'fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import { client, createTestDatabase, startControl, waitFor } from '../support/control-plane.ts';

const database = await createTestDatabase();
const routes: RouteOptions[] = [];
const relay = await startControl({
  databaseUrl: database.url,
  usageBackends: ['file', 'postgres'],
  payloadBackends: ['file', 's3'],
  beforeControl: (app) => app.addHook('onRoute', (route) => { routes.push(route); }),
});
const other = await startControl({ databaseUrl: database.url, adminToken: relay.adminToken });
t.teardown(async () => {
  await relay.close();
  await other.close();
  await database.drop();
});
const api = client(relay.url, { token: relay.adminToken });

t.test('/api/openapi.json is a valid OpenAPI document covering every route', async (t) => {
  const res = await api('GET', '/api/openapi.json');
  t.equal(res.status, 200);
  const doc = res.json;
  const validator = new Validator();
  const result = await validator.validate(doc);
  t.ok(result.valid, JSON.stringify(result.errors ?? null, null, 1)?.slice(0, 2000));
  t.equal(doc.openapi, '3.1.0');
  t.match(doc.components.securitySchemes, { bearerAuth: { type: 'http', scheme: 'bearer' }, cookieAuth: { type: 'apiKey', in: 'cookie', name: 'relay_session' } });

  const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z]+)/g, '{$1}');
  let covered = 0;
  for (const route of routes) {
    if ((route.schema as { hide?: boolean } | undefined)?.hide) continue;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method === 'HEAD') continue;
      const op = doc.paths[toOpenApiPath(route.url)]?.[method.toLowerCase()];
      t.ok(op, `${method} ${route.url} is documented`);
      if (!op) continue;
      covered++;
      const isPublic = (route.config as { public?: boolean } | undefined)?.public === true;
      if (isPublic) {
        t.same(op.security, [], `${method} ${route.url} is public in the document`);
      } else {
        // GET /metrics also takes the scrape-only RELAY_METRICS_TOKEN.
        const scrape = route.url === '/metrics' ? [{ metricsToken: [] }] : [];
        t.same(op.security, [{ bearerAuth: [] }, { cookieAuth: [] }, ...scrape], `${method} ${route.url} needs credentials`);
      }
      t.ok(op.responses && Object.keys(op.responses).some((code) => /^2/.test(code)), `${method} ${route.url} documents its success response`);
      if ((method === 'POST' || method === 'PUT') && !route.url.endsWith('/rotate') && !['/api/auth/logout', '/api/reload', '/api/master-key/generate'].includes(route.url)) {
        t.ok(op.requestBody?.content?.['application/json']?.schema, `${method} ${route.url} documents its body`);
      }
    }
  }
  t.ok(covered >= 50, `${covered} operations checked`);
  const createRelayKey = doc.paths['/api/relay-keys'].post;
  t.match(createRelayKey.requestBody.content['application/json'].schema.properties.spec.required, ['policyId']);
  t.ok(createRelayKey.responses['201'].content['application/json'].schema.properties.plaintext, 'the plaintext answer is typed');
  const hostKey = doc.paths['/api/host-keys/{ref}'].get.responses['200'].content['application/json'].schema;
  t.notOk('value' in hostKey.properties.spec.properties, 'host-key value is not in the response schema');
  t.ok('hasValue' in hostKey.properties.spec.properties);
});

t.test('settings: validated, loaded backends only, seen by every instance', async (t) => {
  t.same((await api('GET', '/api/settings/usage-logging')).json, { backend: 'file' });
  t.same((await api('GET', '/api/settings/payload-logging')).json, { enabled: false, backend: 'file', maxBytes: 1_048_576, viewersReadPayloads: false });

  const usage = await api('PUT', '/api/settings/usage-logging', { backend: 'postgres' });
  t.equal(usage.status, 200);
  t.same(usage.json, { backend: 'postgres' });
  await waitFor(() => other.settings.get('usage-logging').backend === 'postgres', 1_000, 'the other instance to see the usage backend');

  const notLoaded = await api('PUT', '/api/settings/usage-logging', { backend: 'clickhouse' });
  t.equal(notLoaded.status, 400);
  t.equal(notLoaded.json.error.code, 'RELAY_ERR_BACKEND_NOT_LOADED');
  t.match(notLoaded.json.error.message, /clickhouse.*not loaded.*file, postgres/);
  t.equal(relay.settings.get('usage-logging').backend, 'postgres', 'unchanged');
  t.equal((await api('PUT', '/api/settings/usage-logging', {})).status, 400);
  t.equal((await api('PUT', '/api/settings/usage-logging', { backend: 'file', extra: 1 })).json.error.field, '/extra');

  const payload = await api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 's3', maxBytes: 4096 });
  t.equal(payload.status, 200);
  t.same(payload.json, { enabled: true, backend: 's3', maxBytes: 4096, viewersReadPayloads: false });
  await waitFor(() => other.settings.get('payload-logging').enabled, 1_000, 'the other instance to see payload logging on');
  t.equal((await client(other.url, { token: relay.adminToken })('GET', '/config.json')).json.features.payloadLogging, true, '/config.json on the other instance follows');
  const partial = await api('PUT', '/api/settings/payload-logging', { enabled: false });
  t.same(partial.json, { enabled: false, backend: 's3', maxBytes: 4096, viewersReadPayloads: false }, 'fields left out are kept');

  for (const maxBytes of [0, 67_108_865, 1.5, '100']) {
    const bad = await api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes });
    t.equal(bad.status, 400, `maxBytes ${maxBytes}`);
    t.equal(bad.json.error.field, '/maxBytes');
  }
  t.equal((await api('PUT', '/api/settings/payload-logging', { enabled: true, backend: 'file', maxBytes: 67_108_864 })).status, 200, 'the maximum is allowed');
  const wrongBackend = await api('PUT', '/api/settings/payload-logging', { backend: 'postgres' });
  t.equal(wrongBackend.json.error.code, 'RELAY_ERR_BACKEND_NOT_LOADED', 'a usage-only backend is no payload backend');
  t.equal((await api('PUT', '/api/settings/payload-logging', { enabled: 'yes' })).json.error.field, '/enabled');
});

t.test('/config.json: signed-in callers only, nothing secret', async (t) => {
  t.equal((await client(relay.url)('GET', '/config.json')).status, 401, 'not public: the spec lists /healthz and /api/version only');
  const res = await client(relay.url, { token: relay.adminToken })('GET', '/config.json');
  t.equal(res.status, 200);
  t.same(Object.keys(res.json).sort(), ['adapters', 'backends', 'basePaths', 'features', 'plugins', 'version']);
  t.match(res.json, {
    version: '0.0.0-test', plugins: [], basePaths: { control: '/api' },
    features: { masterKey: true }, backends: { usage: ['file', 'postgres'], payload: ['file', 's3'] }, adapters: [],
  });
  t.notOk(res.text.includes(relay.adminToken));
  t.notOk(res.text.includes(relay.masterKey!));
});

t.test('/api/version is public', async (t) => {
  const res = await client(relay.url)('GET', '/api/version');
  t.same(res.json, { name: 'relay', version: '0.0.0-test' });
});

t.test('/api/master-key/generate mints 32 random bytes and stores nothing', async (t) => {
  const a = await api('POST', '/api/master-key/generate');
  const b = await api('POST', '/api/master-key/generate');
  t.equal(a.status, 200);
  t.equal(Buffer.from(a.json.masterKey, 'base64').length, 32);
  t.not(a.json.masterKey, b.json.masterKey);
  t.equal(a.headers.get('cache-control'), 'no-store');
  const rows = await relay.db.query<{ n: string }>("SELECT count(*) AS n FROM settings WHERE value::text LIKE '%' || $1 || '%'", [a.json.masterKey]);
  t.equal(Number(rows.rows[0].n), 0);
});

t.test('/api/reload rebuilds the snapshot', async (t) => {
  const before = relay.sync.snapshot().version;
  // A row written behind the API's back (no change notification) appears only after a reload.
  await relay.db.exec('ALTER TABLE catalog_entities DISABLE TRIGGER catalog_entities_notify');
  await relay.db.query(`INSERT INTO catalog_entities (id, kind, slug, display_name, spec) VALUES ('11111111-1111-4111-8111-111111111111', 'providers', 'sneaky', 'Sneaky', '{"adapter":"openai"}')`);
  await relay.db.exec('ALTER TABLE catalog_entities ENABLE TRIGGER catalog_entities_notify');
  t.notOk(relay.sync.snapshot().providers.has('11111111-1111-4111-8111-111111111111'));
  const res = await api('POST', '/api/reload');
  t.equal(res.status, 200);
  t.ok(res.json.version > before, 'a new snapshot');
  t.ok(Math.abs(Date.parse(res.json.rebuiltAt) - Date.now()) < 5_000, 'rebuilt now');
  t.ok(relay.sync.snapshot().providers.has('11111111-1111-4111-8111-111111111111'), 'the row is in the snapshot');
});

t.test('reloads in quick succession all succeed (two may finish in the same millisecond)', async (t) => {
  const answers = await Promise.all(Array.from({ length: 30 }, () => api('POST', '/api/reload')));
  t.same(answers.map((a) => a.status), answers.map(() => 200));
});
