// Catalog writes that used to be accepted and fail later: host settings undici refuses at send
// time, unbounded fields, slugs that GET /api/{plural}/{ref} cannot reach, duplicate pricings.
// Each is a 4xx at write time naming the field. One whole Relay (Postgres by default,
// RELAY_TEST_DB=pglite for PGlite).
import t, { type Test } from 'tap';
import { startRelay, type ApiResponse } from '../../core/testing.ts';
import { KIND_NAMES, MAX_HOST_HEADERS, MAX_MODEL_BINDINGS, MAX_NAME_LENGTH, MAX_URL_LENGTH, type KindName, type Pricing } from '../../core/catalog/kinds.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import { reservedSlugReason } from '../../core/catalog/slug.ts';

const relay = await startRelay();
t.teardown(() => relay.close());
const { api } = relay;

function expect4xx(t: Test, res: ApiResponse, status: number, code: string, field: string, message?: RegExp): void {
  t.equal(res.status, status, `${status} for ${field} (${JSON.stringify(res.body?.error ?? res.body)})`);
  t.equal(res.body?.error?.code, code);
  t.equal(res.body?.error?.field, field);
  if (message) t.match(res.body?.error?.message, message);
}

async function created(res: Promise<ApiResponse>): Promise<any> {
  const r = await res;
  if (r.status !== 201) throw new Error(`expected 201, got ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const provider = await created(api('POST', '/api/providers', { metadata: { displayName: 'P' }, spec: { adapter: 'openai' } }));
const P = provider.metadata.id as string;
const host = (extra: Record<string, unknown>) => ({ metadata: { displayName: 'h' }, spec: { providerId: P, baseUrl: 'https://api.example.com/v1', ...extra } });

t.test('a host base URL must be usable as is', async (t) => {
  const refused: Array<[string, RegExp]> = [
    ['http://', /not a valid URL/],
    ['https:///v1', /must name a host/],
    ['https://user:secret@api.example.com/v1', /credentials/],
    ['https://api.example.com/v1?api-version=2024', /query string or fragment/],
    ['https://api.example.com/v1#x', /query string or fragment/],
    ['https://api.example.com:0/v1', /port/],
    ['https://api.example.com:99999/v1', /not a valid URL/],
    ['https://exa mple.com', /whitespace/],
    ['https://api.example.com/v1\n', /U\+000A/],
    ['https:\\\\api.example.com', /match/],
    ['https://api.example.com\\v1', /backslash/],
    [`https://api.example.com/${'a'.repeat(MAX_URL_LENGTH)}`, /length/],
  ];
  for (const [baseUrl, why] of refused) {
    expect4xx(t, await api('POST', '/api/hosts', host({ baseUrl })), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/baseUrl', why);
  }
  const ok = await created(api('POST', '/api/hosts', host({ baseUrl: 'http://10.0.0.5:8000/v1/' })));
  // An update is checked the same way: the merged spec is what gets stored.
  expect4xx(t, await api('PUT', `/api/hosts/by-id/${ok.metadata.id}`, { spec: { baseUrl: 'http://' } }), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/baseUrl');
});

t.test('host headers must be sendable, and not ones Relay sets', async (t) => {
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ 'bad header': 'v' }, '/spec/headers/bad header', /not an HTTP header name/],
    [{ 'x-ok': 'v\r\nx-injected: y' }, '/spec/headers/x-ok', /U\+000D/],
    [{ 'x-ok': 'nul\u0000' }, '/spec/headers/x-ok', /U\+0000|NUL/],
    [{ 'x-ok': 'euro €' }, '/spec/headers/x-ok', /U\+20AC/],
    [{ 'a/b~c': 'v' }, '/spec/headers/a~1b~0c', /not an HTTP header name/],
    [{ Host: 'evil.example' }, '/spec/headers/Host', /host cannot be set/],
    [{ 'Content-Length': '3' }, '/spec/headers/Content-Length', /hop-by-hop/],
    [{ 'transfer-encoding': 'chunked' }, '/spec/headers/transfer-encoding', /hop-by-hop/],
    [{ connection: 'upgrade' }, '/spec/headers/connection', /hop-by-hop/],
    [{ 'Content-Type': 'text/plain' }, '/spec/headers/Content-Type', /application\/json/],
    [{ Authorization: 'Bearer sk-x' }, '/spec/headers/Authorization', /host key/],
    [{ 'x-api-key': 'sk-x' }, '/spec/headers/x-api-key', /host key/],
    [{ 'X-Team': 'a', 'x-team': 'b' }, '/spec/headers/x-team', /repeats header X-Team/],
    [{ 'x-big': 'v'.repeat(8193) }, '/spec/headers/x-big', /length/],
    [Object.fromEntries(Array.from({ length: MAX_HOST_HEADERS + 1 }, (_, i) => [`x-h${i}`, 'v'])), '/spec/headers', /properties/],
  ];
  for (const [headers, field, why] of cases) {
    expect4xx(t, await api('POST', '/api/hosts', host({ headers })), 400, 'RELAY_ERR_BAD_REQUEST', field, why);
  }
  // What is allowed is stored with lowercase names, so that it replaces a forwarded header of
  // the same name (forwarded ones are lowercase) instead of going out twice.
  const ok = await created(api('POST', '/api/hosts', host({ headers: { 'OpenAI-Organization': 'org-1', 'x-tab': 'a\tb', 'x-latin1': 'café' } })));
  t.same(ok.spec.headers, { 'openai-organization': 'org-1', 'x-tab': 'a\tb', 'x-latin1': 'café' });
  expect4xx(t, await api('PUT', `/api/hosts/by-id/${ok.metadata.id}`, { spec: { headers: { te: 'trailers' } } }), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/headers/te');
});

t.test('every string, record and array of a spec is bounded', async (t) => {
  const long = 'a'.repeat(3_000_000);
  expect4xx(t, await api('POST', '/api/providers', { metadata: { displayName: 'x' }, spec: { adapter: long } }), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/adapter', /length/);
  expect4xx(t, await api('POST', '/api/providers', { metadata: { displayName: 'x' }, spec: { adapter: 'openai', shapes: ['x'.repeat(MAX_NAME_LENGTH + 1)] } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/spec/shapes/0');
  expect4xx(t, await api('POST', '/api/providers', { metadata: { displayName: 'x' }, spec: { adapter: 'openai', shapes: Array(100).fill('openai.chat') } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/spec/shapes');
  const h = await created(api('POST', '/api/hosts', host({})));
  const binding = { hostId: h.metadata.id, upstreamModel: 'm' };
  expect4xx(t, await api('POST', '/api/models', { metadata: { displayName: 'x' }, spec: { bindings: [{ ...binding, upstreamModel: 'm'.repeat(257) }] } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/spec/bindings/0/upstreamModel');
  expect4xx(t, await api('POST', '/api/models', { metadata: { displayName: 'x' }, spec: { bindings: Array(MAX_MODEL_BINDINGS + 1).fill(binding) } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/spec/bindings');
  expect4xx(t, await api('POST', '/api/models', { metadata: { displayName: 'x' }, spec: { description: long } }), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/description');
  expect4xx(t, await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: h.metadata.id, valueFrom: { kind: 'env', env: `E${'E'.repeat(200)}` } } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/spec/valueFrom/env');
  expect4xx(t, await api('POST', '/api/host-keys', { metadata: { displayName: 'x' }, spec: { hostId: h.metadata.id, valueFrom: { kind: 'stored' }, value: long } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/spec/value');
  const ghost = '00000000-0000-4000-8000-000000000000';
  expect4xx(t, await api('POST', '/api/policies', { metadata: { displayName: 'x' }, spec: { modelIds: Array(5001).fill(ghost) } }), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/modelIds');
  expect4xx(t, await api('POST', '/api/policies', { metadata: { displayName: 'x' }, spec: { rateLimitIds: Array(65).fill(ghost) } }), 400, 'RELAY_ERR_BAD_REQUEST', '/spec/rateLimitIds');
});

t.test('slugs that GET /api/{plural}/{ref} could not reach are refused', async (t) => {
  const hk = (metadata: Record<string, unknown>) => ({ metadata, spec: { hostId: hostId, valueFrom: { kind: 'env', env: 'NOPE' } } });
  const hostId = (await created(api('POST', '/api/hosts', host({})))).metadata.id;
  expect4xx(t, await api('POST', '/api/host-keys', hk({ displayName: 'x', slug: 'health' })), 400, 'RELAY_ERR_BAD_REQUEST', '/metadata/slug', /reserved/);
  const policy = await created(api('POST', '/api/policies', { metadata: { displayName: 'all' }, spec: { modelIds: '*' } }));
  expect4xx(t, await api('POST', '/api/relay-keys', { metadata: { displayName: 'x', slug: 'by-id' }, spec: { policyId: policy.metadata.id } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/metadata/slug', /reserved/);
  expect4xx(t, await api('POST', '/api/providers', { metadata: { displayName: 'x', slug: P }, spec: { adapter: 'openai' } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/metadata/slug', /UUID/);
  expect4xx(t, await api('POST', '/api/providers', { metadata: { displayName: 'x', slug: '2acad905-0000-4000-8000-000000000000' }, spec: { adapter: 'openai' } }),
    400, 'RELAY_ERR_BAD_REQUEST', '/metadata/slug', /UUID/);
  // `health` is a fine slug for other kinds.
  t.equal((await api('POST', '/api/providers', { metadata: { displayName: 'x', slug: 'health' }, spec: { adapter: 'openai' } })).status, 201);

  // A slug derived from the display name steps around reserved ones, and stays readable.
  const health = await created(api('POST', '/api/host-keys', hk({ displayName: 'Health' })));
  t.equal(health.metadata.slug, 'health-2');
  const read = await api('GET', `/api/host-keys/${health.metadata.slug}`);
  t.equal(read.body.metadata?.id, health.metadata.id, 'read back by its slug');
  const uuidNamed = await created(api('POST', '/api/providers', { metadata: { displayName: P }, spec: { adapter: 'openai' } }));
  t.equal(uuidNamed.metadata.slug, `${P}-2`);
  const byId = await created(api('POST', '/api/providers', { metadata: { displayName: 'By ID' }, spec: { adapter: 'openai' } }));
  t.equal(byId.metadata.slug, 'by-id-2');
});

t.test('every static segment under /api/{plural}/ is a reserved slug of that kind', async (t) => {
  // Fastify prefers a static route to /api/{plural}/:ref; a route added without reserving its
  // segment would shadow an entity that has that slug.
  let checked = 0;
  for (const path of routePaths(relay.relay.control.printRoutes({ commonPrefix: false }))) {
    const [, api, kind, segment] = path.split('/');
    if (api !== 'api' || !(KIND_NAMES as string[]).includes(kind) || !segment || segment.startsWith(':')) continue;
    checked++;
    t.ok(reservedSlugReason(kind as KindName, segment), `${kind}/${segment} is reserved`);
  }
  t.ok(checked >= 9, `found the static routes (${checked}): by-id for each kind, host-keys/health`);
});

/** Full paths from Fastify's printRoutes tree, where each level indents by four characters. */
function routePaths(tree: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const at = line.indexOf('/');
    if (at < 0) continue;
    const depth = Math.floor(at / 4);
    stack.length = depth;
    stack.push(line.slice(at).replace(/ \(.*$/, ''));
    out.push(stack.join(''));
  }
  return out;
}

t.test('one pricing per model and host', async (t) => {
  const h1 = (await created(api('POST', '/api/hosts', host({})))).metadata.id;
  const h2 = (await created(api('POST', '/api/hosts', host({})))).metadata.id;
  const model = await created(api('POST', '/api/models', { metadata: { displayName: 'priced' }, spec: { bindings: [{ hostId: h1, upstreamModel: 'm' }] } }));
  const M = model.metadata.id;
  const pricing = (displayName: string, spec: Record<string, unknown>) => ({ metadata: { displayName }, spec: { modelId: M, inputPerMillion: 1, outputPerMillion: 2, ...spec } });

  const wide = await created(api('POST', '/api/pricings', pricing('wide', {})));
  expect4xx(t, await api('POST', '/api/pricings', pricing('wide again', { currency: 'EUR' })), 409, 'RELAY_ERR_CONFLICT', '/spec/modelId', new RegExp(wide.metadata.slug));
  const onH1 = await created(api('POST', '/api/pricings', pricing('on h1', { hostId: h1 })));
  expect4xx(t, await api('POST', '/api/pricings', pricing('on h1 again', { hostId: h1 })), 409, 'RELAY_ERR_CONFLICT', '/spec/hostId', new RegExp(onH1.metadata.id));
  const onH2 = await created(api('POST', '/api/pricings', pricing('on h2', { hostId: h2 })));

  // An update that moves a pricing onto a taken pair is refused; one that keeps its pair is not.
  expect4xx(t, await api('PUT', `/api/pricings/by-id/${onH2.metadata.id}`, { spec: { hostId: h1 } }), 409, 'RELAY_ERR_CONFLICT', '/spec/hostId');
  t.equal((await api('PUT', `/api/pricings/by-id/${onH2.metadata.id}`, { spec: { outputPerMillion: 3 } })).status, 200);
  t.equal((await api('DELETE', `/api/pricings/by-id/${onH1.metadata.id}`)).status, 204);
  t.equal((await api('PUT', `/api/pricings/by-id/${onH2.metadata.id}`, { spec: { hostId: h1 } })).status, 200, 'a freed pair can be taken');

  // Concurrent creates of one pair: exactly one wins.
  const m2 = (await created(api('POST', '/api/models', { metadata: { displayName: 'raced' }, spec: {} }))).metadata.id;
  const race = await Promise.all([1, 2, 3, 4].map((i) => api('POST', '/api/pricings', { metadata: { displayName: `race ${i}` }, spec: { modelId: m2, inputPerMillion: i, outputPerMillion: i } })));
  t.same(race.map((r) => r.status).sort(), [201, 409, 409, 409]);
});

t.test('currency is an ISO 4217 code', async (t) => {
  const M = (await created(api('POST', '/api/models', { metadata: { displayName: 'cur' }, spec: {} }))).metadata.id;
  for (const currency of ['€€€', 'usd', 'US', 'USDT']) {
    expect4xx(t, await api('POST', '/api/pricings', { metadata: { displayName: 'c' }, spec: { modelId: M, currency, inputPerMillion: 1, outputPerMillion: 1 } }),
      400, 'RELAY_ERR_BAD_REQUEST', '/spec/currency');
  }
  t.equal((await api('POST', '/api/pricings', { metadata: { displayName: 'c' }, spec: { modelId: M, currency: 'JPY', inputPerMillion: 1, outputPerMillion: 1 } })).status, 201);
});

t.test('the snapshot does not depend on row order', async (t) => {
  // Two pricings for one pair, as rows written before the store refused them may be.
  const entity = (id: string, createdAt: string, input: number): Pricing => ({
    metadata: { id, slug: id.slice(0, 8), displayName: 'p', createdAt, updatedAt: createdAt },
    spec: { modelId: 'm', currency: 'USD', inputPerMillion: input, outputPerMillion: 0 },
  });
  const older = entity('11111111-0000-4000-8000-000000000000', '2026-01-01T00:00:00.000Z', 1);
  const newer = entity('00000000-0000-4000-8000-000000000000', '2026-01-02T00:00:00.000Z', 2);
  const tie = entity('22222222-0000-4000-8000-000000000000', '2026-01-01T00:00:00.000Z', 3);
  for (const order of [[older, newer, tie], [tie, newer, older], [newer, tie, older]]) {
    const tables = emptyTables();
    for (const p of order) tables.pricings.set(p.metadata.id, p);
    t.equal(buildSnapshot(tables).pricingFor('m', null)?.spec.inputPerMillion, 1, 'the oldest pricing applies');
  }

  // loadAll reads rows in creation order, whatever order Postgres keeps them in.
  const db = relay.relay.db;
  const ids = ['cccccccc-0000-4000-8000-000000000000', 'aaaaaaaa-0000-4000-8000-000000000000', 'bbbbbbbb-0000-4000-8000-000000000000'];
  const times = ['2001-01-03', '2001-01-01', '2001-01-02'];
  for (const [i, id] of ids.entries()) {
    await db.query(`INSERT INTO catalog_entities (id, kind, slug, display_name, spec, created_at) VALUES ($1, 'rate-limits', $2, 'r', '{}', $3)`, [id, `order-${i}`, times[i]]);
  }
  // An update writes a new row version at the end of the table: a scan without ORDER BY would
  // now return the oldest row last.
  await db.query(`UPDATE catalog_entities SET display_name = 'touched' WHERE id = $1`, [ids[1]]);
  const loaded = (await relay.relay.store.loadAll()).filter((r) => ids.includes(r.entity.metadata.id)).map((r) => r.entity.metadata.id);
  t.same(loaded, [ids[1], ids[2], ids[0]], 'ordered by created_at');
});
