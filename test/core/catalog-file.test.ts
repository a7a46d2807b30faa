// The catalog file (issue 39 #2) through the admin API of real instances on Postgres: export
// prints references by slug and no secret; applying it to an empty database reproduces the
// catalog; a second apply is a no-op; a dry run and a refused file change nothing; --prune
// deletes what the file lacks; the running instance routes by what it just applied.
import t from 'tap';
import { eventually, startRelay, type TestRelay } from '../../core/testing.ts';
import { parseCatalogDocument } from '../../core/catalog-file/apply.ts';
import { generateMasterKey } from '../../core/crypto/sealing.ts';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const SECRET = 'sk-ant-catalog-file-secret-value-1234';
const masterKey = generateMasterKey();
const env = { UPSTREAM_OPENAI_KEY: 'sk-from-env' };

async function must(relay: TestRelay, method: string, path: string, body?: unknown): Promise<any> {
  const res = await relay.api(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A catalog with every kind the file carries, references of each form, and both kinds of host key. */
async function seedCatalog(relay: TestRelay): Promise<void> {
  const create = (kind: string, displayName: string, slug: string, spec: Record<string, unknown>) =>
    must(relay, 'POST', `/api/${kind}`, { metadata: { displayName, slug }, spec });
  const openai = await create('providers', 'OpenAI', 'openai', { adapter: 'openai' });
  const anthropic = await create('providers', 'Anthropic', 'anthropic', { adapter: 'anthropic', shapes: ['anthropic.messages'] });
  const oaHost = await create('hosts', 'OpenAI US', 'openai-us', { providerId: openai.metadata.id, baseUrl: 'https://api.openai.com/v1', timeoutMs: 30_000, headers: { 'X-Team': 'core' } });
  const anHost = await create('hosts', 'Anthropic', 'anthropic-main', { providerId: anthropic.metadata.id, baseUrl: 'https://api.anthropic.com/v1', http2: true });
  const rl = await create('rate-limits', 'Sixty a minute', 'sixty', { requestsPerMinute: 60, concurrentRequests: 4 });
  const gpt = await create('models', 'GPT 4.1', 'gpt-4.1', { contextWindow: 1_000_000, bindings: [{ hostId: oaHost.metadata.id, upstreamModel: 'gpt-4.1', weight: 3 }] });
  const claude = await create('models', 'Claude Sonnet', 'claude-sonnet', { reasoning: true, bindings: [{ hostId: anHost.metadata.id, upstreamModel: 'claude-sonnet-4-5' }] });
  // Fallbacks both ways: a cycle the apply has to create in two steps.
  await must(relay, 'PUT', `/api/models/by-id/${gpt.metadata.id}`, { spec: { fallbacks: [{ modelId: claude.metadata.id, on: ['server_error'] }] } });
  await must(relay, 'PUT', `/api/models/by-id/${claude.metadata.id}`, { spec: { fallbacks: [{ modelId: gpt.metadata.id }] } });
  const team = await create('policies', 'Team', 'team', { modelIds: [gpt.metadata.id, claude.metadata.id], rateLimitIds: [rl.metadata.id] });
  await create('policies', 'Everything', 'everything', { modelIds: '*' });
  const hostTier = await create('policies', 'Host limits', 'host-limits', { tier: 'host', modelIds: [gpt.metadata.id] });
  await create('host-keys', 'OpenAI from env', 'openai-env', { hostId: oaHost.metadata.id, policyId: hostTier.metadata.id, valueFrom: { kind: 'env', env: 'UPSTREAM_OPENAI_KEY' } });
  await create('host-keys', 'Anthropic stored', 'anthropic-stored', { hostId: anHost.metadata.id, valueFrom: { kind: 'stored' }, value: SECRET, weight: 5 });
  await create('pricings', 'GPT on OpenAI US', 'gpt-us', { modelId: gpt.metadata.id, hostId: oaHost.metadata.id, inputPerMillion: 2, outputPerMillion: 8 });
  await create('budgets', 'Team monthly', 'team-monthly', { scope: { policyId: team.metadata.id }, window: 'monthly', limitAmount: 100 });
  await must(relay, 'POST', '/api/relay-keys', { metadata: { displayName: 'ci' }, spec: { policyId: team.metadata.id } });
}

const source = await startRelay({ masterKey, env });
t.teardown(() => source.close());
await seedCatalog(source);

t.test('export: every kind, references by slug, host keys by reference, no secret, no relay key', async (t) => {
  const res = await source.api('GET', '/api/catalog/export');
  t.equal(res.status, 200);
  const doc = res.body;
  const text = JSON.stringify(doc);
  t.notMatch(text, UUID, 'no id anywhere: references are slugs');
  t.notOk(text.includes(SECRET), 'the stored secret is not in the export');
  t.notOk(text.includes('sk-from-env'), 'nor an environment variable\'s value');
  t.equal(doc.version, 1);
  t.notOk('relay-keys' in doc, 'relay keys are not part of the file');
  // Header values may be a gateway's key: the file holds them sealed, as the catalog does.
  t.match(doc.hosts.find((h: any) => h.slug === 'openai-us'), { spec: { providerId: 'openai', headers: { 'x-team': /^v1\./ } } });
  t.match(doc.models.find((m: any) => m.slug === 'gpt-4.1'), { spec: { bindings: [{ hostId: 'openai-us' }], fallbacks: [{ modelId: 'claude-sonnet' }] } });
  t.match(doc.policies.find((p: any) => p.slug === 'team'), { spec: { modelIds: ['gpt-4.1', 'claude-sonnet'], rateLimitIds: ['sixty'] } });
  t.match(doc.policies.find((p: any) => p.slug === 'everything'), { spec: { modelIds: '*' } });
  const stored = doc['host-keys'].find((k: any) => k.slug === 'anthropic-stored');
  t.match(stored, { spec: { hostId: 'anthropic-main', valueFrom: { kind: 'stored' } }, sealedValue: /^v1\./ });
  t.notOk('hasValue' in stored.spec);
  t.match(doc['host-keys'].find((k: any) => k.slug === 'openai-env'), { spec: { valueFrom: { kind: 'env', env: 'UPSTREAM_OPENAI_KEY' }, policyId: 'host-limits' } });
  t.notOk('sealedValue' in doc['host-keys'].find((k: any) => k.slug === 'openai-env'));
  t.match(doc.budgets, [{ slug: 'team-monthly', spec: { scope: { policyId: 'team' } } }]);
});

t.test('applied to an empty database it reproduces the catalog; again, it is a no-op', async (t) => {
  const exported = (await source.api('GET', '/api/catalog/export')).body;
  const target = await startRelay({ masterKey, env });
  t.teardown(() => target.close());
  const first = await target.api('POST', '/api/catalog/apply', { document: exported });
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.equal(first.body.changes.length, 14);
  t.ok(first.body.changes.every((c: any) => c.action === 'create'));
  t.same((await target.api('GET', '/api/catalog/export')).body, exported, 'the target exports the same file');
  // Propagated at once to the instance's snapshot, and the stored value opens to the same secret.
  const snapshot = target.relay.sync.snapshot();
  t.ok([...snapshot.byKind('models').values()].some((m) => m.metadata.slug === 'claude-sonnet'));
  const key = [...snapshot.byKind('host-keys').values()].find((k) => k.metadata.slug === 'anthropic-stored') as any;
  t.ok(key.sealedValue);

  const second = await target.api('POST', '/api/catalog/apply', { document: exported });
  t.same(second.body.changes, [], 'nothing to do');
  t.equal(second.body.unchanged, 14);
  t.equal((await target.api('GET', '/api/models/gpt-4.1')).body.spec.contextWindow, 1_000_000);
});

t.test('a change: the diff names entity and fields; a dry run writes nothing', async (t) => {
  const doc = (await source.api('GET', '/api/catalog/export')).body;
  const host = doc.hosts.find((h: any) => h.slug === 'openai-us');
  host.spec.timeoutMs = 45_000;
  delete host.spec.headers;
  doc['rate-limits'].push({ slug: 'ten', spec: { requestsPerMinute: 10 } });
  doc.policies.find((p: any) => p.slug === 'team').spec.rateLimitIds = ['sixty', 'ten'];
  const dry = await source.api('POST', '/api/catalog/apply', { document: doc, dryRun: true });
  t.equal(dry.status, 200, JSON.stringify(dry.body));
  t.same(dry.body.changes, [
    { action: 'update', kind: 'hosts', slug: 'openai-us', fields: ['headers', 'timeoutMs'] },
    { action: 'create', kind: 'rate-limits', slug: 'ten' },
    { action: 'update', kind: 'policies', slug: 'team', fields: ['rateLimitIds'] },
  ]);
  t.equal(dry.body.dryRun, true);
  t.equal((await source.api('GET', '/api/rate-limits/ten')).status, 404, 'the dry run created nothing');
  t.match((await source.api('GET', '/api/hosts/openai-us')).body.spec, { timeoutMs: 30_000, headers: { 'x-team': 'core' } });

  const real = await source.api('POST', '/api/catalog/apply', { document: doc });
  t.same(real.body.changes, dry.body.changes);
  // The audit trail: the apply's row, then a row per entity it changed (rows follow their answers).
  const requestId = real.headers.get('x-request-id');
  type Row = { method: string; route: string; target: string | null; targetName: string | null; requestId: string; actor: { kind: string } };
  const auditOf = async (id: string | null) => ((await source.api('GET', '/api/audit?limit=500')).body.items as Row[]).filter((e) => e.requestId === id).reverse();
  await eventually(async () => (await auditOf(requestId)).length === 4);
  t.same((await auditOf(requestId)).map((e) => `${e.method} ${e.route} ${e.targetName}`), [
    'POST /api/catalog/apply null', 'CATALOG update hosts: headers, timeoutMs openai-us', 'CATALOG create rate-limits ten', 'CATALOG update policies: rateLimitIds team',
  ], 'the audit trail has the apply and a row per entity it changed');
  t.equal((await auditOf(requestId))[2]!.target, (await source.api('GET', '/api/rate-limits/ten')).body.metadata.id, 'naming the entity made by its id');
  await eventually(async () => (await auditOf(dry.headers.get('x-request-id'))).length === 1);
  t.same((await auditOf(dry.headers.get('x-request-id'))).map((e) => e.method), ['POST'], 'a dry run changed nothing: its own row only');
  const stored = (await source.api('GET', '/api/hosts/openai-us')).body.spec;
  t.equal(stored.timeoutMs, 45_000);
  t.notOk('headers' in stored, 'a field the file leaves out is cleared');
  t.equal((await source.api('POST', '/api/catalog/apply', { document: doc })).body.changes.length, 0);
});

t.test('--prune deletes what the file lacks; without it they are kept and counted', async (t) => {
  const target = await startRelay({ masterKey, env });
  t.teardown(() => target.close());
  const full = (await source.api('GET', '/api/catalog/export')).body;
  await must(target, 'POST', '/api/catalog/apply', { document: full });
  const smaller = structuredClone(full);
  delete smaller.budgets;
  delete smaller.pricings;
  smaller.models = smaller.models.filter((m: any) => m.slug === 'gpt-4.1');
  delete smaller.models[0].spec.fallbacks;
  smaller.policies = smaller.policies.filter((p: any) => p.slug !== 'team');
  smaller.policies.find((p: any) => p.slug === 'host-limits').spec.modelIds = ['gpt-4.1'];
  const kept = await target.api('POST', '/api/catalog/apply', { document: smaller });
  t.equal(kept.status, 200, JSON.stringify(kept.body));
  t.equal(kept.body.kept, 4, 'the budget, pricing, model and policy the file leaves out');
  t.same(kept.body.changes, [{ action: 'update', kind: 'models', slug: 'gpt-4.1', fields: ['fallbacks'] }]);

  const pruned = await target.api('POST', '/api/catalog/apply', { document: smaller, prune: true });
  t.equal(pruned.status, 200, JSON.stringify(pruned.body));
  t.same(pruned.body.changes.map((c: any) => `${c.action} ${c.kind}/${c.slug}`).sort(), [
    'delete budgets/team-monthly', 'delete models/claude-sonnet', 'delete policies/team', 'delete pricings/gpt-us',
  ]);
  t.equal((await target.api('GET', '/api/models/claude-sonnet')).status, 404);
  t.same((await target.api('GET', '/api/catalog/export')).body, smaller);
});

t.test('a bad file is refused naming the entity and field, and nothing is half-applied', async (t) => {
  const target = await startRelay({ masterKey, env });
  t.teardown(() => target.close());
  const count = async () => (await target.api('GET', '/api/providers')).body.items.length;
  const base = (await source.api('GET', '/api/catalog/export')).body;

  const badRef = structuredClone(base);
  badRef.hosts[0].spec.providerId = 'opneai';
  const ref = await target.api('POST', '/api/catalog/apply', { document: badRef });
  t.equal(ref.status, 400);
  t.match(ref.body.error.message, `hosts/${badRef.hosts[0].slug}: /spec/providerId: no provider with slug "opneai" in the file nor in the catalog`);

  // Valid up to the last kind: the store refuses a budget's time zone after everything before it was written.
  const lateBad = structuredClone(base);
  lateBad.budgets[0].spec.timezone = 'Mars/Olympus';
  const late = await target.api('POST', '/api/catalog/apply', { document: lateBad });
  t.equal(late.status, 400);
  t.match(late.body.error.message, /^budgets\/team-monthly: \/spec\/timezone: "Mars\/Olympus" is not an IANA time zone/);
  t.equal(await count(), 0, 'no provider was left behind');

  const plaintext = structuredClone(base);
  plaintext['host-keys'][0].spec.value = 'sk-plain';
  const plain = await target.api('POST', '/api/catalog/apply', { document: plaintext });
  t.equal(plain.status, 400);
  t.match(plain.body.error.message, /host-keys\/[a-z-]+: \/spec\/value: a catalog file holds no plaintext secret/);
  t.notMatch(plain.body.error.message, 'sk-plain');

  const foreign = structuredClone(base);
  foreign['host-keys'].find((k: any) => k.sealedValue).sealedValue = 'v1.otherkey.aaaa.bbbb.cccc';
  const sealed = await target.api('POST', '/api/catalog/apply', { document: foreign });
  t.equal(sealed.status, 400);
  t.match(sealed.body.error.message, /host-keys\/anthropic-stored: \/sealedValue: does not open with this instance's RELAY_MASTER_KEY/);

  const reserved = structuredClone(base);
  reserved['host-keys'].find((k: any) => k.slug === 'openai-env').spec.valueFrom = { kind: 'env', env: 'RELAY_ADMIN_TOKEN' };
  const envRef = await target.api('POST', '/api/catalog/apply', { document: reserved });
  t.equal(envRef.status, 400);
  t.match(envRef.body.error.message, /host-keys\/openai-env: \/spec\/valueFrom\/env: RELAY_ADMIN_TOKEN is one of Relay's own settings/);

  // Nested deeper than any spec goes: refused before its copy and comparison recurse (5,000 levels
  // gave a 500). Through the API the control plane's own bound (64 levels) comes first; the file's
  // (32 in a spec) is what a file at start or from the CLI meets.
  const deep = structuredClone(base);
  deep.providers[0].spec.extra = JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`);
  const tooDeep = await target.api('POST', '/api/catalog/apply', { document: deep });
  t.equal(tooDeep.status, 400);
  t.match(tooDeep.body.error.message, `providers/${deep.providers[0].slug}: /spec: nests arrays and objects deeper than 32 levels`);
  deep.providers[0].spec.extra = JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`);
  t.throws(() => parseCatalogDocument(deep), { code: 'RELAY_ERR_BAD_REQUEST', message: /nests arrays and objects deeper than 32 levels/ }, 'a file 5,000 levels deep: the same 400, no stack overflow');

  const adapter = structuredClone(base);
  adapter.providers[0].spec.adapter = 'nonesuch';
  const notLoaded = await target.api('POST', '/api/catalog/apply', { document: adapter });
  t.equal(notLoaded.status, 400);
  t.match(notLoaded.body.error, { code: 'RELAY_ERR_ADAPTER_NOT_LOADED', message: /^providers\/anthropic: \/spec\/adapter: no loaded plugin provides the adapter "nonesuch"/ });

  const shape = await target.api('POST', '/api/catalog/apply', { document: { version: 1, hosts: [{ slug: 'x', spec: {}, extra: 1 }] } });
  t.equal(shape.status, 400);
  t.match(shape.body.error.message, 'catalog file: /hosts/0/extra: unknown field');
  const twice = await target.api('POST', '/api/catalog/apply', { document: { version: 1, providers: [{ slug: 'a', spec: { adapter: 'openai' } }, { slug: 'a', spec: { adapter: 'openai' } }] } });
  t.match(twice.body.error.message, 'providers/a: /slug: appears twice in providers');
  t.equal(await count(), 0);
});

t.test('a viewer cannot export (sealed values) nor apply', async (t) => {
  await must(source, 'POST', '/api/users', { username: 'vera', password: 'viewer password 1', role: 'viewer' });
  const login = await fetch(`${source.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'vera', password: 'viewer password 1' }) });
  const cookie = login.headers.get('set-cookie')!.split(';')[0];
  const exp = await fetch(`${source.controlUrl}/api/catalog/export`, { headers: { cookie } });
  t.equal(exp.status, 403);
  const text = await exp.text();
  t.notMatch(text, /v1\./);
  const apply = await fetch(`${source.controlUrl}/api/catalog/apply`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/json', 'x-relay-csrf': '1', origin: source.controlUrl }, body: JSON.stringify({ document: { version: 1 } }),
  });
  t.equal(apply.status, 403);
});

t.test('on the embedded database (PGlite) too: a refused file and a dry run leave nothing, an apply writes all', async (t) => {
  const embedded = await startRelay({ masterKey, env, database: 'pglite' });
  t.teardown(() => embedded.close());
  const doc = (await source.api('GET', '/api/catalog/export')).body;
  const late = structuredClone(doc);
  late.budgets[0].spec.timezone = 'Nowhere/Special';
  t.equal((await embedded.api('POST', '/api/catalog/apply', { document: late })).status, 400);
  const dry = await embedded.api('POST', '/api/catalog/apply', { document: doc, dryRun: true });
  t.equal(dry.status, 200, JSON.stringify(dry.body));
  t.ok(dry.body.changes.length > 10);
  t.same((await embedded.api('GET', '/api/providers')).body.items, [], 'neither wrote anything');
  const real = await embedded.api('POST', '/api/catalog/apply', { document: doc });
  t.same(real.body.changes, dry.body.changes, 'the dry run reported what the apply did');
  t.same((await embedded.api('GET', '/api/catalog/export')).body, doc);
});

t.test('propagation: an apply on one instance reaches another on the same database (NOTIFY at commit)', async (t) => {
  const peer = await startRelay({ masterKey, env, database: source.databaseUrl! });
  t.teardown(() => peer.close());
  const doc = (await source.api('GET', '/api/catalog/export')).body;
  doc['rate-limits'].push({ slug: 'propagated', spec: { tokensPerMinute: 1000 } });
  const res = await source.api('POST', '/api/catalog/apply', { document: doc });
  t.same(res.body.changes, [{ action: 'create', kind: 'rate-limits', slug: 'propagated' }]);
  await eventually(() => [...peer.relay.sync.snapshot().byKind('rate-limits').values()].some((r) => r.metadata.slug === 'propagated'));
  t.pass('the peer instance has the applied rate limit');
});
