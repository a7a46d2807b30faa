// SECURITY.md's list of public routes is what the listeners do: every GET it lists answers
// without credentials, and every other GET route of the control API (from its OpenAPI document)
// and the listener-root routes (/config.json, /metrics) answer 401 without them. The probes
// answer a status and nothing about the infrastructure.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TEST_PLUGINS, startRelay } from '../../core/testing.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const doc = readFileSync(path.join(root, 'SECURITY.md'), 'utf8');
const paragraph = /Public routes[\s\S]*?(?=\n\n)/.exec(doc)?.[0] ?? '';
const [inferencePart = '', controlPart = ''] = paragraph.split(/on the control port/);
const listed = (text: string) => [...text.split(/Everything else/)[0]!.matchAll(/`(GET|POST) (\/[^`]*)`/g)].map((m) => ({ method: m[1]!, path: m[2]! }));
const inferenceRoutes = listed(inferencePart);
const controlRoutes = listed(controlPart);

const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'admin-ui' }] });
t.teardown(() => relay.close());

t.test('SECURITY.md lists the public routes of both ports', async (t) => {
  t.ok(inferenceRoutes.length >= 3 && controlRoutes.length >= 2, `parsed ${JSON.stringify({ inferenceRoutes, controlRoutes })}`);
});

t.test('every listed GET answers without credentials', async (t) => {
  for (const { method, path: p } of inferenceRoutes) {
    if (method !== 'GET') continue;
    const res = await fetch(relay.inferenceUrl + p);
    t.equal(res.status, 200, `inference ${method} ${p}`);
  }
  for (const { method, path: p } of controlRoutes) {
    if (method !== 'GET') continue;
    const res = await fetch(relay.controlUrl + p);
    t.not(res.status, 401, `control ${method} ${p} is public`);
  }
});

t.test('every other control GET route needs credentials', async (t) => {
  const openapi = await relay.api('GET', '/api/openapi.json');
  t.equal(openapi.status, 200);
  const publicPaths = new Set(controlRoutes.filter((r) => r.method === 'GET').map((r) => r.path));
  const paths = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)
    .filter(([p, ops]) => 'get' in ops && !p.includes('{'))
    .map(([p]) => p);
  for (const p of [...new Set([...paths, '/config.json', '/metrics', '/api/health'])]) {
    if (publicPaths.has(p)) continue;
    t.equal((await fetch(relay.controlUrl + p)).status, 401, `GET ${p} needs credentials (not listed as public)`);
  }
});

t.test('the public probes reveal nothing about the infrastructure', async (t) => {
  for (const url of [...['/livez', '/readyz', '/healthz'].map((p) => relay.inferenceUrl + p), `${relay.controlUrl}/livez`]) {
    const body = await (await fetch(url)).json() as Record<string, unknown>;
    t.same(Object.keys(body), ['status'], `${url} answers only a status`);
  }
});
