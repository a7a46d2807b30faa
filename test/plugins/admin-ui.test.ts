// admin-ui: the dashboard is served at the control root with an SPA fallback for deep links,
// and never answers an API path (those stay JSON 404s from the listener).
import t from 'tap';
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import adminUi from '../../plugins/admin-ui/index.ts';
import { answerFor, safePathname } from '../../plugins/admin-ui/request-rules.ts';
import type { RelayContext } from '../../core/plugin-api.ts';

const INDEX = '<!doctype html><html><body><div id="app"></div><script type="module" src="/assets/app-ABC123.js"></script></body></html>';

function makeDist(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'relay-admin-ui-'));
  mkdirSync(path.join(root, 'assets'));
  writeFileSync(path.join(root, 'index.html'), INDEX);
  writeFileSync(path.join(root, 'assets', 'app-ABC123.js'), 'console.log("app")');
  writeFileSync(path.join(root, 'robots.txt'), 'User-agent: *\nDisallow: /\n');
  return root;
}

/** A bare control listener as the kernel builds it: a JSON 404 and a few API routes. */
async function controlWith(root: string, warnings: string[] = []): Promise<FastifyInstance> {
  const app = Fastify();
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: { code: 'RELAY_ERR_NOT_FOUND', message: `no route for ${request.method} ${request.url}`, type: 'not_found', status: 404 } });
  });
  app.get('/api/providers', async () => ({ items: [], nextCursor: null }));
  app.get('/api/logs/:requestId', async (request) => ({ request_id: (request.params as { requestId: string }).requestId }));
  app.get('/config.json', async () => ({ version: 'test' }));
  const log = { warn: (msg: string) => warnings.push(msg), info: () => {}, child: () => log };
  await adminUi.register({ control: app, log } as unknown as RelayContext, { root });
  await app.ready();
  return app;
}

t.test('deep links and the root return the app', async (t) => {
  const root = makeDist();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const app = await controlWith(root);
  t.teardown(() => app.close());
  for (const url of ['/', '/usage', '/logs', '/logs/req_0123abcd', '/catalog/models', '/catalog/relay-keys/5b2f0c9e-8f3a-4c1e-9d7a-2b3c4d5e6f70', '/settings?tab=x', '/catalog/models/']) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, `${url} answers 200`);
    t.match(res.headers['content-type'], /text\/html/, `${url} is HTML`);
    t.equal(res.body, INDEX, `${url} is index.html`);
    t.equal(res.headers['cache-control'], 'no-cache', `${url} is revalidated`);
  }
  const head = await app.inject({ method: 'HEAD', url: '/logs/req_1' });
  t.equal(head.statusCode, 200, 'HEAD of a deep link works');
});

t.test('files of the build are served as files', async (t) => {
  const root = makeDist();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const app = await controlWith(root);
  t.teardown(() => app.close());
  const js = await app.inject({ method: 'GET', url: '/assets/app-ABC123.js' });
  t.equal(js.statusCode, 200);
  t.match(js.headers['content-type'], /javascript/);
  t.equal(js.body, 'console.log("app")');
  t.match(js.headers['cache-control'], /immutable/, 'hashed assets are cached for good');
  const robots = await app.inject({ method: 'GET', url: '/robots.txt' });
  t.equal(robots.statusCode, 200);
  t.match(robots.body, /Disallow/);
  const missing = await app.inject({ method: 'GET', url: '/assets/app-OLD.js' });
  t.equal(missing.statusCode, 404, 'a missing hashed asset is a 404, not the app');
  t.equal(missing.json().error.code, 'RELAY_ERR_NOT_FOUND');
});

t.test('API paths are never answered with the app', async (t) => {
  const root = makeDist();
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const app = await controlWith(root);
  t.teardown(() => app.close());
  const known = await app.inject({ method: 'GET', url: '/api/providers' });
  t.same(known.json(), { items: [], nextCursor: null }, 'a known API route answers itself');
  const detail = await app.inject({ method: 'GET', url: '/api/logs/req_1' });
  t.same(detail.json(), { request_id: 'req_1' });
  t.same((await app.inject({ method: 'GET', url: '/config.json' })).json(), { version: 'test' }, '/config.json is the API\'s');
  for (const url of ['/api', '/api/', '/api/nope', '/api/providers/extra/segments', '/API/nope', '/metrics', '/config.json/x']) {
    const res = await app.inject({ method: 'GET', url });
    if (url === '/config.json/x') {
      // Not a reserved path: the SPA may answer it; the point is that it is not /config.json.
      t.not(res.body, JSON.stringify({ version: 'test' }));
      continue;
    }
    t.equal(res.statusCode, 404, `${url} is a 404`);
    t.match(res.headers['content-type'], /application\/json/, `${url} is JSON`);
    t.equal(res.json().error.code, 'RELAY_ERR_NOT_FOUND', `${url} comes from the listener's 404`);
  }
  const post = await app.inject({ method: 'POST', url: '/catalog/models', payload: {} });
  t.equal(post.statusCode, 404, 'only GET falls back to the app');
  const traversal = await app.inject({ method: 'GET', url: '/..%2f..%2fetc%2fpasswd' });
  t.equal(traversal.statusCode, 404, 'a path with .. is refused');
  t.notMatch(traversal.body, /root:/);
});

t.test('a missing build serves a placeholder, and is picked up once built', async (t) => {
  const root = path.join(mkdtempSync(path.join(tmpdir(), 'relay-admin-ui-')), 'dist');
  t.teardown(() => rmSync(path.dirname(root), { recursive: true, force: true }));
  const warnings: string[] = [];
  const app = await controlWith(root, warnings);
  t.teardown(() => app.close());
  t.match(warnings.join('\n'), /npm run build:ui/, 'a clear warning is logged at start');
  const page = await app.inject({ method: 'GET', url: '/logs/req_1' });
  t.equal(page.statusCode, 503);
  t.match(page.headers['content-type'], /text\/html/);
  t.match(page.body, /npm run build:ui/, 'the page says how to build the dashboard');
  const api = await app.inject({ method: 'GET', url: '/api/nope' });
  t.equal(api.statusCode, 404, 'API paths still 404 as JSON');
  t.equal(api.json().error.code, 'RELAY_ERR_NOT_FOUND');

  mkdirSync(path.join(root, 'assets'), { recursive: true });
  writeFileSync(path.join(root, 'index.html'), INDEX);
  const after = await app.inject({ method: 'GET', url: '/logs/req_1' });
  t.equal(after.statusCode, 200, 'a build made after start is served without a restart');
  t.equal(after.body, INDEX);
});

t.test('request rules', async (t) => {
  const files = new Set(['index.html', 'assets/app-1.js', 'favicon.svg']);
  const isFile = (p: string) => files.has(p);
  t.same(answerFor('/', isFile), { kind: 'app' });
  t.same(answerFor('/favicon.svg', isFile), { kind: 'file', file: 'favicon.svg' });
  t.same(answerFor('/assets/app-1.js', isFile), { kind: 'file', file: 'assets/app-1.js' });
  t.same(answerFor('/assets/app-2.js', isFile), { kind: 'not-found' });
  t.same(answerFor('/api/x', isFile), { kind: 'not-found' });
  t.same(answerFor('/Api/x', isFile), { kind: 'not-found' }, 'case does not sneak past the API prefix');
  t.same(answerFor('/apidocs', isFile), { kind: 'app' }, 'only the /api segment is reserved');
  t.same(answerFor('/metrics', isFile), { kind: 'not-found' });
  t.same(answerFor('/logs/abc', isFile), { kind: 'app' });
  t.same(answerFor(null, isFile), { kind: 'not-found' });
  t.equal(safePathname('/logs/a%20b?x=1'), '/logs/a b');
  t.equal(safePathname('/a/../b'), null);
  t.equal(safePathname('/%E0%A4%A'), null, 'bad percent-encoding is refused');
  t.equal(safePathname('//logs//x'), '/logs/x');
});
