// Uniform CRUD over HTTP for each of the eight kinds, on a real Postgres: create, read by slug
// and id, paginated list, partial update, delete, and the 400/404/409 answers.
import t from 'tap';
import { client, createTestDatabase, startControl } from '../support/control-plane.ts';

const database = await createTestDatabase();
const relay = await startControl({ databaseUrl: database.url });
t.teardown(async () => {
  await relay.close();
  await database.drop();
});
const api = client(relay.url, { token: relay.adminToken });

async function create(kind: string, displayName: string, spec: Record<string, unknown>) {
  const res = await api('POST', `/api/${kind}`, { metadata: { displayName }, spec });
  if (res.status !== 201) throw new Error(`create ${kind}: ${res.status} ${res.text}`);
  return kind === 'relay-keys' ? res.json.relayKey : res.json;
}

// The graph every kind's fixture can reference.
const provider = await create('providers', 'OpenAI', { adapter: 'openai' });
const host = await create('hosts', 'OpenAI US', { providerId: provider.metadata.id, baseUrl: 'https://api.openai.com/v1' });
const model = await create('models', 'GPT 4.1', { bindings: [{ hostId: host.metadata.id, upstreamModel: 'gpt-4.1' }] });
const rateLimit = await create('rate-limits', 'Sixty per minute', { requestsPerMinute: 60 });
const policy = await create('policies', 'Default', { modelIds: [model.metadata.id], rateLimitIds: [rateLimit.metadata.id] });
// A model may have one pricing per host (and one for no host): each pricing fixture prices its own model.
const pricedModels: Array<{ metadata: { id: string } }> = [];
for (let i = 0; i < 10; i++) pricedModels.push(await create('models', `Priced ${i}`, {}));
let pricedCount = 0;

interface Fixture {
  spec: () => Record<string, unknown>;
  /** A field set to a value of the wrong type. */
  wrongType: [string, unknown];
  required: string;
  patch: Record<string, unknown>;
  /** What the patch must leave as it was. */
  keeps: string;
}

const fixtures: Record<string, Fixture> = {
  providers: { spec: () => ({ adapter: 'anthropic' }), wrongType: ['adapter', 42], required: 'adapter', patch: { shapes: ['anthropic.messages'] }, keeps: 'adapter' },
  hosts: {
    spec: () => ({ providerId: provider.metadata.id, baseUrl: 'https://eu.example.com/v1', timeoutMs: 5000 }),
    wrongType: ['timeoutMs', '5000'], required: 'providerId', patch: { enabled: false }, keeps: 'timeoutMs',
  },
  models: {
    spec: () => ({ reasoning: true, contextWindow: 200000, bindings: [{ hostId: host.metadata.id, upstreamModel: 'o3' }] }),
    wrongType: ['reasoning', 'yes'], required: '', patch: { contextWindow: 100000 }, keeps: 'reasoning',
  },
  'host-keys': {
    spec: () => ({ hostId: host.metadata.id, valueFrom: { kind: 'env', env: 'OPENAI_API_KEY' }, weight: 3 }),
    wrongType: ['weight', 'heavy'], required: 'hostId', patch: { enabled: false }, keeps: 'weight',
  },
  'rate-limits': { spec: () => ({ requestsPerMinute: 10, tokensPerMinute: 1000 }), wrongType: ['tokensPerMinute', true], required: '', patch: { requestsPerMinute: 20 }, keeps: 'tokensPerMinute' },
  policies: {
    spec: () => ({ modelIds: '*', payloadLoggingEnabled: false, tier: 'relay' }),
    wrongType: ['payloadLoggingEnabled', 1], required: '', patch: { payloadLoggingEnabled: true }, keeps: 'tier',
  },
  pricings: {
    spec: () => ({ modelId: pricedModels[pricedCount++ % pricedModels.length].metadata.id, inputPerMillion: 2, outputPerMillion: 8, currency: 'EUR' }),
    wrongType: ['inputPerMillion', 'two'], required: 'modelId', patch: { outputPerMillion: 10 }, keeps: 'currency',
  },
  'relay-keys': {
    spec: () => ({ policyId: policy.metadata.id, payloadLoggingEnabled: true }),
    wrongType: ['enabled', 'no'], required: 'policyId', patch: { enabled: false }, keeps: 'payloadLoggingEnabled',
  },
};

for (const [kind, fx] of Object.entries(fixtures)) {
  t.test(kind, async (t) => {
    const made = [];
    for (const name of [`Alpha ${kind}`, `Beta ${kind}`, `Gamma ${kind}`]) made.push(await create(kind, name, fx.spec()));
    const first = made[0];
    t.match(first.metadata, { id: /^[0-9a-f-]{36}$/, slug: `alpha-${kind}`, displayName: `Alpha ${kind}` }, 'server stamps id and slug');
    t.ok(Date.parse(first.metadata.createdAt) && Date.parse(first.metadata.updatedAt), 'timestamps');

    const bySlug = await api('GET', `/api/${kind}/${first.metadata.slug}`);
    t.equal(bySlug.status, 200);
    t.same(bySlug.json.metadata, first.metadata, 'read by slug');
    const byId = await api('GET', `/api/${kind}/${first.metadata.id}`);
    t.same(byId.json, bySlug.json, 'read by id');

    const again = await create(kind, `Alpha ${kind}`, fx.spec());
    t.equal(again.metadata.slug, `alpha-${kind}-2`, 'slugs stay unique');
    const proposed = await api('POST', `/api/${kind}`, { metadata: { displayName: 'Anything', slug: `custom-${kind}` }, spec: fx.spec() });
    t.equal((kind === 'relay-keys' ? proposed.json.relayKey : proposed.json).metadata.slug, `custom-${kind}`, 'a valid proposed slug is kept');
    const badSlug = await api('POST', `/api/${kind}`, { metadata: { displayName: 'X', slug: 'Not A Slug' }, spec: fx.spec() });
    t.equal(badSlug.status, 400);
    t.equal(badSlug.json.error.field, '/metadata/slug');

    // Paginated list.
    const page1 = await api('GET', `/api/${kind}?limit=2`);
    t.equal(page1.status, 200);
    t.equal(page1.json.items.length, 2);
    t.type(page1.json.nextCursor, 'string');
    const seen = new Set(page1.json.items.map((e: any) => e.metadata.id));
    let cursor = page1.json.nextCursor;
    while (cursor) {
      const page = await api('GET', `/api/${kind}?limit=2&cursor=${encodeURIComponent(cursor)}`);
      t.equal(page.status, 200);
      for (const e of page.json.items) {
        t.notOk(seen.has(e.metadata.id), 'no item twice');
        seen.add(e.metadata.id);
      }
      cursor = page.json.nextCursor;
    }
    for (const e of made) t.ok(seen.has(e.metadata.id), 'every item listed');
    const searched = await api('GET', `/api/${kind}?q=gamma`);
    t.same(searched.json.items.map((e: any) => e.metadata.id), [made[2].metadata.id], 'q searches names');
    const badLimit = await api('GET', `/api/${kind}?limit=0`);
    t.equal(badLimit.status, 400);
    t.equal(badLimit.json.error.field, 'query:/limit');
    const badCursor = await api('GET', `/api/${kind}?cursor=nonsense`);
    t.equal(badCursor.status, 400);

    // Partial update: only the named fields change.
    const before = byId.json;
    const updated = await api('PUT', `/api/${kind}/by-id/${first.metadata.id}`, { metadata: { displayName: `Alpha ${kind} renamed` }, spec: fx.patch });
    t.equal(updated.status, 200, updated.text);
    t.equal(updated.json.metadata.displayName, `Alpha ${kind} renamed`);
    t.equal(updated.json.metadata.slug, first.metadata.slug, 'the slug is stable across renames');
    t.match(updated.json.spec, fx.patch);
    t.same(updated.json.spec[fx.keeps], before.spec[fx.keeps], `${fx.keeps} is kept`);
    for (const [k, v] of Object.entries(before.spec)) if (!(k in fx.patch)) t.same(updated.json.spec[k], v, `${k} unchanged`);
    // The URL that PUT and DELETE take reads the entity too, by id only.
    const readBack = await api('GET', `/api/${kind}/by-id/${first.metadata.id}`);
    t.equal(readBack.status, 200, readBack.text);
    t.same(readBack.json, updated.json, 'GET by-id reads what PUT wrote');
    const bySlugAsId = await api('GET', `/api/${kind}/by-id/${first.metadata.slug}`);
    t.equal(bySlugAsId.status, 400, 'a slug is not an id');
    t.equal(bySlugAsId.json.error.field, 'path:/id', bySlugAsId.text);

    // 400s name the field.
    const wrong = await api('POST', `/api/${kind}`, { metadata: { displayName: 'Bad' }, spec: { ...fx.spec(), [fx.wrongType[0]]: fx.wrongType[1] } });
    t.equal(wrong.status, 400);
    t.equal(wrong.json.error.code, 'RELAY_ERR_BAD_REQUEST');
    t.equal(wrong.json.error.field, `/spec/${fx.wrongType[0]}`, wrong.json.error.message);
    const unknown = await api('POST', `/api/${kind}`, { metadata: { displayName: 'Bad' }, spec: { ...fx.spec(), bogus: 1 } });
    t.equal(unknown.status, 400);
    t.equal(unknown.json.error.field, '/spec/bogus');
    t.match(unknown.json.error.message, /\/spec\/bogus: unknown field/);
    if (fx.required) {
      const spec = fx.spec();
      delete spec[fx.required];
      const missing = await api('POST', `/api/${kind}`, { metadata: { displayName: 'Bad' }, spec });
      t.equal(missing.status, 400);
      t.equal(missing.json.error.field, `/spec/${fx.required}`);
      t.match(missing.json.error.message, /is required/);
    }
    const wrongPut = await api('PUT', `/api/${kind}/by-id/${first.metadata.id}`, { spec: { [fx.wrongType[0]]: fx.wrongType[1] } });
    t.equal(wrongPut.status, 400);
    t.equal(wrongPut.json.error.field, `/spec/${fx.wrongType[0]}`);
    const noName = await api('POST', `/api/${kind}`, { spec: fx.spec() });
    t.equal(noName.status, 400);
    t.equal(noName.json.error.field, '/metadata');

    // 404s.
    const ghost = '00000000-0000-4000-8000-000000000000';
    t.equal((await api('GET', `/api/${kind}/${ghost}`)).status, 404);
    t.equal((await api('GET', `/api/${kind}/no-such-slug`)).status, 404);
    const putGhost = await api('PUT', `/api/${kind}/by-id/${ghost}`, { spec: fx.patch });
    t.equal(putGhost.status, 404);
    t.equal(putGhost.json.error.code, 'RELAY_ERR_NOT_FOUND');
    t.equal((await api('DELETE', `/api/${kind}/by-id/${ghost}`)).status, 404);
    t.equal((await api('GET', `/api/${kind}/by-id/${ghost}`)).json.error.code, 'RELAY_ERR_NOT_FOUND');

    // Delete.
    const del = await api('DELETE', `/api/${kind}/by-id/${made[1].metadata.id}`);
    t.equal(del.status, 204);
    t.equal((await api('GET', `/api/${kind}/${made[1].metadata.id}`)).status, 404, 'gone');
  });
}

t.test('a dangling reference is a 400 naming the field', async (t) => {
  const res = await api('POST', '/api/hosts', { metadata: { displayName: 'Dangling' }, spec: { providerId: '00000000-0000-4000-8000-000000000000', baseUrl: 'https://x.example' } });
  t.equal(res.status, 400);
  t.equal(res.json.error.field, '/spec/providerId');
  const binding = await api('PUT', `/api/models/by-id/${model.metadata.id}`, { spec: { bindings: [{ hostId: provider.metadata.id, upstreamModel: 'x' }] } });
  t.equal(binding.status, 400, 'a provider id is not a host id');
  t.equal(binding.json.error.field, '/spec/bindings/hostId');
});

t.test('deleting a referenced entity is a 409 naming the referrers', async (t) => {
  const res = await api('DELETE', `/api/providers/by-id/${provider.metadata.id}`);
  t.equal(res.status, 409);
  t.equal(res.json.error.code, 'RELAY_ERR_IN_USE');
  t.match(res.json.error.message, host.metadata.slug);
  t.ok(res.json.error.message.startsWith(`provider ${provider.metadata.slug} is still used by: host ${host.metadata.slug} (its providerId)`), 'by slugs and field names');
  t.notMatch(res.json.error.message, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'no ids');
  const pol = await api('DELETE', `/api/rate-limits/by-id/${rateLimit.metadata.id}`);
  t.equal(pol.status, 409);
  t.match(pol.json.error.message, policy.metadata.slug);
});

t.test('a partial update does not reset fields that have defaults', async (t) => {
  const key = await create('relay-keys', 'Defaults', { policyId: policy.metadata.id, enabled: false });
  const res = await api('PUT', `/api/relay-keys/by-id/${key.metadata.id}`, { spec: { payloadLoggingEnabled: true } });
  t.equal(res.status, 200);
  t.equal(res.json.spec.enabled, false, 'enabled stays false');
  t.equal(res.json.spec.payloadLoggingEnabled, true);
  const prefix = res.json.spec.prefix;
  const spoof = await api('PUT', `/api/relay-keys/by-id/${key.metadata.id}`, { spec: { prefix: 'rk_evil' } });
  t.equal(spoof.status, 200);
  t.equal(spoof.json.spec.prefix, prefix, 'a caller cannot set the server-set prefix');
});
