// A scrape credential without admin power (issue 39 #4): RELAY_METRICS_TOKEN reads GET /metrics
// and is refused everywhere else, so Prometheus no longer needs the break-glass admin token.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { client, createTestDatabase, startControl } from '../support/control-plane.ts';
import { startRelay } from '../../core/testing.ts';

const METRICS_TOKEN = `mtr_${randomBytes(24).toString('base64url')}`;
const logLines: string[] = [];
const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url, metricsToken: METRICS_TOKEN, logStream: { write: (line) => { logLines.push(line); } } });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});
const scraper = client(relay.url, { token: METRICS_TOKEN });
const admin = client(relay.url, { token: relay.adminToken });

t.test('the metrics token reads /metrics', async (t) => {
  const res = await scraper('GET', '/metrics');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  t.match(res.text, /^# HELP relay_control_requests_total/m);
  const head = await fetch(`${relay.url}/metrics`, { method: 'HEAD', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  t.equal(head.status, 200, 'HEAD too');
});

t.test('and nothing else: every other guarded route is a 403 naming the limit', async (t) => {
  const attempts: Array<[string, string, unknown?]> = [
    ['GET', '/api/providers'], ['POST', '/api/providers', { metadata: { displayName: 'x' }, spec: { adapter: 'openai' } }],
    ['GET', '/config.json'], ['GET', '/api/auth/whoami'], ['GET', '/api/openapi.json'], ['GET', '/api/settings/usage-logging'],
    ['PUT', '/api/settings/usage-logging', { backend: 'file' }], ['POST', '/api/master-key/generate'], ['GET', '/api/no-such-route'],
    ['POST', '/metrics'],
  ];
  for (const [method, path, body] of attempts) {
    const res = await scraper(method, path, body);
    t.equal(res.status, 403, `${method} ${path}`);
    t.equal(res.json?.error?.code, 'RELAY_ERR_FORBIDDEN', `${method} ${path}`);
    t.equal(res.json?.error?.message, 'the metrics token (RELAY_METRICS_TOKEN) only reads GET /metrics');
  }
  t.equal((await admin('GET', '/api/providers')).json.items.length, 0, 'nothing was created');
});

t.test('the admin token still scrapes; no token or a wrong one does not', async (t) => {
  t.equal((await admin('GET', '/metrics')).status, 200);
  t.equal((await client(relay.url)('GET', '/metrics')).status, 401);
  t.equal((await client(relay.url, { token: `${METRICS_TOKEN}x` })('GET', '/metrics')).status, 401);
});

t.test('the OpenAPI document lists the scrape token for /metrics only', async (t) => {
  const doc = (await admin('GET', '/api/openapi.json')).json;
  t.ok(doc.components.securitySchemes.metricsToken, 'the scheme is described');
  t.same(doc.paths['/metrics'].get.security, [{ bearerAuth: [] }, { cookieAuth: [] }, { metricsToken: [] }]);
  t.same(doc.paths['/api/providers'].get.security, [{ bearerAuth: [] }, { cookieAuth: [] }]);
});

t.test('the token is in no answer and no log line', async (t) => {
  t.notOk(logLines.some((line) => line.includes(METRICS_TOKEN)), 'not logged');
  const res = await scraper('GET', '/api/providers');
  t.notOk(res.text.includes(METRICS_TOKEN), 'not echoed');
});

t.test('a started Relay reads RELAY_METRICS_TOKEN', async (t) => {
  const full = await startRelay({ plugins: [{ use: 'auth-bearer' }, { use: 'log-file' }], env: { RELAY_METRICS_TOKEN: METRICS_TOKEN } });
  t.teardown(() => full.close());
  const scrape = await fetch(`${full.controlUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  t.equal(scrape.status, 200);
  t.match(await scrape.text(), /relay_process_cpu_seconds_total|relay_control_requests_total/);
  const other = await fetch(`${full.controlUrl}/api/providers`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  t.equal(other.status, 403);
});
