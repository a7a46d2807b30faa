// Budget alert webhook URLs are credentials: with RELAY_MASTER_KEY set the database row holds them
// sealed (no plaintext), an admin still reads and edits them whole, a viewer sees the origin, the
// alert still reaches a real webhook receiver, and `catalog export` prints them sealed while
// `catalog apply` of that export round-trips. A URL stored without a master key keeps working
// and is sealed at the next start with one (and re-sealed by a key rotation).
import t from 'tap';
import pg from 'pg';
import { createTestDatabase, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey, parseMasterKey } from '../../core/crypto/sealing.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const db = await createTestDatabase();
const sql = new pg.Client({ connectionString: db.url });
const up = await startFakeUpstream();
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 50, outputTokens: 15 })) }));
const hooks = await startWebhookReceiver();
const masterKey = generateMasterKey();
const alertsConfig = { budgets: { alerts: { attempts: 2, retryBaseMs: 50, timeoutMs: 2_000 } } };
const running: TestRelay[] = [];
const start = async (key: string | null, env: Record<string, string> = {}, database = db.url) => {
  const relay = await startRelay({ database, masterKey: key, env, config: alertsConfig });
  running.push(relay);
  return relay;
};
const stop = async (relay: TestRelay) => {
  running.splice(running.indexOf(relay), 1);
  await relay.close();
};
t.teardown(async () => {
  for (const r of [...running]) await r.close();
  await sql.end();
  await up.close();
  await hooks.close();
  await db.drop();
});

const LEGACY_PATH = '/services/T0LEGACY/B0LEGACY/legacySecretToken111';
const SEALED_PATH = '/services/T0SEALED/B0SEALED/sealedSecretToken222';
const budgetRow = async (id: string): Promise<string> => (await sql.query('SELECT spec::text AS spec FROM catalog_entities WHERE id = $1', [id])).rows[0].spec;
const storedUrls = async (id: string): Promise<string[]> => (await sql.query("SELECT spec->'alertWebhooks' AS hooks FROM catalog_entities WHERE id = $1", [id])).rows[0].hooks.map((h: { url: string }) => h.url);

let legacyId = '';
let relay: TestRelay;

t.test('without a master key: stored as given, and the export is refused rather than print it', async (t) => {
  const plain = await start(null);
  await sql.connect();
  const created = await plain.api('POST', '/api/budgets', { metadata: { displayName: 'legacy' }, spec: { window: 'daily', limitAmount: 1, alertWebhooks: [{ url: hooks.url + LEGACY_PATH, format: 'slack' }] } });
  t.equal(created.status, 201);
  legacyId = created.body.metadata.id;
  t.same(await storedUrls(legacyId), [hooks.url + LEGACY_PATH], 'plaintext, as before sealing existed');
  const exported = await plain.api('GET', '/api/catalog/export');
  t.equal(exported.status, 400);
  t.equal(exported.body.error.code, 'RELAY_ERR_MASTER_KEY_MISSING');
  t.match(exported.body.error.message, /budgets\/legacy: .*RELAY_MASTER_KEY/);
  t.notOk(JSON.stringify(exported.body).includes('legacySecretToken'), 'the refusal does not show the URL');
  await stop(plain);
});

t.test('a start with a master key seals the stored URL; the admin still reads it whole, a viewer by origin', async (t) => {
  relay = await start(masterKey);
  const row = await budgetRow(legacyId);
  t.notOk(row.includes('legacySecretToken'), 'no plaintext URL in the row');
  t.match((await storedUrls(legacyId))[0], new RegExp(`^v1\\.${parseMasterKey(masterKey).id}\\.`), 'sealed under the master key');
  const admin = await relay.api('GET', `/api/budgets/${legacyId}`);
  t.same(admin.body.spec.alertWebhooks, [{ url: hooks.url + LEGACY_PATH, format: 'slack' }], 'the admin reads the URL to edit it');
  await relay.api('POST', '/api/users', { username: 'vera', password: 'viewer password 1', role: 'viewer' });
  const login = await fetch(`${relay.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'vera', password: 'viewer password 1' }) });
  const viewer = await fetch(`${relay.controlUrl}/api/budgets/${legacyId}`, { headers: { cookie: login.headers.get('set-cookie')!.split(';')[0]! } });
  const text = await viewer.text();
  t.same(JSON.parse(text).spec.alertWebhooks, [{ url: `${hooks.url}/…`, format: 'slack' }], 'a viewer sees the origin');
  t.notOk(text.includes('v1.'), 'nor the sealed form');
});

let sealedId = '';
t.test('written through the API: sealed in the row, and the alert reaches the webhook', async (t) => {
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'sealed-gpt', upstreamModel: 'local-model' });
  await relay.api('POST', '/api/pricings', { metadata: { displayName: 'price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
  const created = await relay.api('POST', '/api/budgets', {
    metadata: { displayName: 'sealed', slug: 'sealed' },
    spec: { scope: { policyId: route.policyId }, window: 'daily', limitAmount: 0.1, action: 'alert', alertAt: [0.5], alertWebhooks: [{ url: hooks.url + SEALED_PATH, format: 'json' }] },
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  sealedId = created.body.metadata.id;
  t.equal(created.body.spec.alertWebhooks[0].url, hooks.url + SEALED_PATH, 'the answer shows the admin the URL');
  t.notOk((await budgetRow(sealedId)).includes('sealedSecretToken'), 'no plaintext URL in the row');
  t.notOk(JSON.stringify(relay.relay.sync.snapshot().byKind('budgets').get(sealedId)).includes('sealedSecretToken'), 'nor in the snapshot in memory');
  await eventually(() => relay.relay.sync.snapshot().byKind('budgets').has(sealedId) && relay.relay.sync.snapshot().pricings.size === 1 && relay.relay.sync.snapshot().relayKeys.has(route.relayKeyId));
  const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'sealed-gpt', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(answer.status, 200);
  await usageRecord(relay, answer.headers.get('x-request-id')!);
  await eventually(() => hooks.on(SEALED_PATH).length >= 1, 5_000);
  t.match(hooks.on(SEALED_PATH)[0]!.body, { type: 'relay.budget.alert', threshold: 0.5, budget: { id: sealedId } }, 'the receiver got the alert at the real URL');
  // The receiver answers before the outcome is written: wait for the record, not only the POST.
  await eventually(async () => (await relay.api('GET', `/api/budgets/${sealedId}/alerts`)).body.alerts[0]?.status === 'delivered', 5_000);
  const alerts = await relay.api('GET', `/api/budgets/${sealedId}/alerts`);
  t.match(alerts.body.alerts[0].deliveries, [{ target: `${hooks.url}/…`, status: 'delivered' }], 'recorded by origin');
});

t.test('an update: the same URL keeps its ciphertext, a new one is sealed, a bad sealed value is a 400', async (t) => {
  const before = await storedUrls(sealedId);
  const same = await relay.api('PUT', `/api/budgets/by-id/${sealedId}`, { spec: { limitAmount: 0.2, alertWebhooks: [{ url: hooks.url + SEALED_PATH, format: 'json' }] } });
  t.equal(same.status, 200);
  t.same(await storedUrls(sealedId), before, 'an unchanged URL is not sealed again');
  const other = `${hooks.url}/services/T0NEW/B0NEW/newSecretToken333`;
  const changed = await relay.api('PUT', `/api/budgets/by-id/${sealedId}`, { spec: { alertWebhooks: [{ url: hooks.url + SEALED_PATH, format: 'json' }, { url: other, format: 'slack' }] } });
  t.equal(changed.status, 200);
  const after = await storedUrls(sealedId);
  t.equal(after[0], before[0]);
  t.match(after[1], /^v1\./);
  t.notOk((await budgetRow(sealedId)).includes('newSecretToken'), 'the new URL is sealed too');
  const forged = await relay.api('PUT', `/api/budgets/by-id/${sealedId}`, { spec: { alertWebhooks: [{ url: 'v1.deadbeef.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA', format: 'json' }] } });
  t.equal(forged.status, 400);
  t.match(forged.body.error, { code: 'RELAY_ERR_BAD_REQUEST', field: '/spec/alertWebhooks/0/url', message: /does not open/ });
  const notUrl = await relay.api('POST', '/api/budgets', { metadata: { displayName: 'bad' }, spec: { window: 'daily', limitAmount: 1, alertWebhooks: [{ url: 'ftp://example.com/secretPart', format: 'json' }] } });
  t.match(notUrl.body.error, { field: '/spec/alertWebhooks/0/url', message: /http:\/\/ or https:\/\// }, 'a plaintext non-URL is still refused by the spec');
});

t.test('catalog export prints the URLs sealed; apply of the export round-trips', async (t) => {
  const exported = (await relay.api('GET', '/api/catalog/export')).body;
  const text = JSON.stringify(exported);
  for (const secret of ['legacySecretToken', 'sealedSecretToken', 'newSecretToken', hooks.url]) t.notOk(text.includes(secret), `no ${secret} in the export`);
  const sealedBudget = exported.budgets.find((b: any) => b.slug === 'sealed');
  t.match(sealedBudget.spec.alertWebhooks, [{ url: /^v1\./, format: 'json' }, { url: /^v1\./, format: 'slack' }]);

  const again = await relay.api('POST', '/api/catalog/apply', { document: exported });
  t.same(again.body.changes, [], 'applied to its own source: nothing changes');

  const otherDb = await createTestDatabase();
  t.teardown(() => otherDb.drop());
  const target = await start(masterKey, {}, otherDb.url);
  const first = await target.api('POST', '/api/catalog/apply', { document: exported });
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.ok(first.body.changes.some((c: any) => c.kind === 'budgets' && c.slug === 'sealed' && c.action === 'create'));
  const read = await target.api('GET', '/api/budgets/sealed');
  t.same(read.body.spec.alertWebhooks.map((h: any) => h.url), [hooks.url + SEALED_PATH, `${hooks.url}/services/T0NEW/B0NEW/newSecretToken333`], 'the target opens the same URLs');
  t.same((await target.api('POST', '/api/catalog/apply', { document: exported })).body.changes, [], 'a second apply is a no-op');
  t.same((await target.api('GET', '/api/catalog/export')).body, exported, 'the target exports the same file');

  // A file sealed under another master key does not open here: refused, naming the field.
  const foreign = await start(generateMasterKey(), {}, (await createTestDatabase().then((d) => { t.teardown(() => d.drop()); return d; })).url);
  const { 'host-keys': _sealedToo, ...withoutHostKeys } = exported;
  const refused = await foreign.api('POST', '/api/catalog/apply', { document: withoutHostKeys });
  t.equal(refused.status, 400);
  t.match(refused.body.error, { field: /^budgets\/\w+\/spec\/alertWebhooks\/0\/url$/, message: /does not open/ });
  await stop(foreign);
  await stop(target);
});

t.test("a key rotation re-seals the URLs under the new key; alerts still go out", async (t) => {
  await stop(relay);
  const newKey = generateMasterKey();
  relay = await start(newKey, { RELAY_MASTER_KEY_PREVIOUS: masterKey });
  const newId = parseMasterKey(newKey).id;
  for (const id of [legacyId, sealedId]) {
    for (const url of await storedUrls(id)) t.match(url, new RegExp(`^v1\\.${newId}\\.`), 'under the new key');
  }
  t.equal((await relay.api('GET', `/api/budgets/${legacyId}`)).body.spec.alertWebhooks[0].url, hooks.url + LEGACY_PATH);
});

t.test('an instance without the key that sealed a URL: the admin sees it sealed and may save it back unchanged', async (t) => {
  await stop(relay);
  relay = await start(generateMasterKey());
  const read = await relay.api('GET', `/api/budgets/${legacyId}`);
  const shown = read.body.spec.alertWebhooks[0].url as string;
  t.match(shown, /^v1\./, 'shown as stored: it does not open here');
  t.notOk(shown.includes('legacySecretToken'));
  const saved = await relay.api('PUT', `/api/budgets/by-id/${legacyId}`, { spec: { limitAmount: 2, alertWebhooks: read.body.spec.alertWebhooks } });
  t.equal(saved.status, 200, 'an unchanged sealed URL is kept, not refused');
  t.same(await storedUrls(legacyId), [shown]);
});
