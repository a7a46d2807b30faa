// A host's extra headers may hold a gateway's key (Azure APIM's ocp-apim-subscription-key,
// cf-aig-authorization, helicone-auth...). With RELAY_MASTER_KEY set the database row, the
// snapshot in memory and the local snapshot file hold the values sealed; an admin reads them
// whole, a viewer sees the names and a mask; the upstream still receives the value; an upstream
// answer or error quoting it is masked; `catalog export` prints them sealed and `catalog apply`
// of that export round-trips. A value stored without a master key keeps working and is sealed at
// the next start with one (and re-sealed by a key rotation).
import t from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { createTestDatabase, eventually, seedRoute, startRelay, type TestRelay } from '../../core/testing.ts';
import { generateMasterKey, parseMasterKey } from '../../core/crypto/sealing.ts';
import { LOCAL_SNAPSHOT_FILE } from '../../core/catalog/local-snapshot.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay } from '../support/relay-client.ts';

const db = await createTestDatabase();
const sql = new pg.Client({ connectionString: db.url });
const up = await startFakeUpstream();
const masterKey = generateMasterKey();
const running: TestRelay[] = [];
const start = async (key: string | null, env: Record<string, string> = {}, database = db.url) => {
  const relay = await startRelay({ database, masterKey: key, env });
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
  await db.drop();
});

const LEGACY = 'apim-legacy-subscription-0123456789abcdef';
const GATEWAY = 'cf-aig-token-fedcba9876543210fedcba';
const hostRow = async (id: string): Promise<string> => (await sql.query('SELECT spec::text AS spec FROM catalog_entities WHERE id = $1', [id])).rows[0].spec;
const storedHeaders = async (id: string): Promise<Record<string, string>> => (await sql.query("SELECT spec->'headers' AS headers FROM catalog_entities WHERE id = $1", [id])).rows[0].headers;

async function viewerCookie(relay: TestRelay): Promise<string> {
  await relay.api('POST', '/api/users', { username: 'vera', password: 'viewer password 1', role: 'viewer' });
  const login = await fetch(`${relay.controlUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'vera', password: 'viewer password 1' }) });
  return login.headers.get('set-cookie')!.split(';')[0]!;
}

let legacyId = '';
let relay: TestRelay;

t.test('without a master key: stored as given, and the export is refused rather than print it', async (t) => {
  const plain = await start(null);
  await sql.connect();
  const provider = await plain.api('POST', '/api/providers', { metadata: { displayName: 'legacy provider' }, spec: { adapter: 'openai' } });
  const created = await plain.api('POST', '/api/hosts', {
    metadata: { displayName: 'legacy', slug: 'legacy' },
    spec: { providerId: provider.body.metadata.id, baseUrl: `${up.url}/v1`, headers: { 'Ocp-Apim-Subscription-Key': LEGACY, 'x-team': 'core' } },
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  legacyId = created.body.metadata.id;
  t.same(await storedHeaders(legacyId), { 'ocp-apim-subscription-key': LEGACY, 'x-team': 'core' }, 'plaintext, as before sealing existed');
  const exported = await plain.api('GET', '/api/catalog/export');
  t.equal(exported.status, 400);
  t.equal(exported.body.error.code, 'RELAY_ERR_MASTER_KEY_MISSING');
  t.match(exported.body.error.message, /hosts\/legacy: .*RELAY_MASTER_KEY/);
  t.notOk(JSON.stringify(exported.body).includes(LEGACY), 'the refusal does not show the value');
  await stop(plain);
});

t.test('a start with a master key seals the stored values; an admin reads them whole, a viewer sees a mask', async (t) => {
  relay = await start(masterKey);
  t.notOk((await hostRow(legacyId)).includes(LEGACY), 'no plaintext value in the row');
  const stored = await storedHeaders(legacyId);
  t.match(stored, { 'ocp-apim-subscription-key': new RegExp(`^v1\\.${parseMasterKey(masterKey).id}\\.`), 'x-team': /^v1\./ }, 'every value sealed under the master key');
  const admin = await relay.api('GET', `/api/hosts/${legacyId}`);
  t.same(admin.body.spec.headers, { 'ocp-apim-subscription-key': LEGACY, 'x-team': 'core' }, 'the admin reads the values to edit them');
  const cookie = await viewerCookie(relay);
  for (const url of [`/api/hosts/${legacyId}`, '/api/hosts']) {
    const text = await (await fetch(`${relay.controlUrl}${url}`, { headers: { cookie } })).text();
    const body = JSON.parse(text);
    const host = url === '/api/hosts' ? body.items.find((h: any) => h.metadata.id === legacyId) : body;
    t.same(host.spec.headers, { 'ocp-apim-subscription-key': '********', 'x-team': '********' }, `${url}: a viewer sees the names and a mask`);
    t.notOk(text.includes(LEGACY), `${url}: not the value`);
    t.notOk(text.includes('v1.'), `${url}: nor its sealed form`);
  }
});

let route: Awaited<ReturnType<typeof seedRoute>>;
t.test('written through the API: sealed in the row, the snapshot and its file; the upstream gets the value', async (t) => {
  route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'gateway-gpt', upstreamModel: 'local-model' });
  const updated = await relay.api('PUT', `/api/hosts/by-id/${route.hostId}`, { spec: { headers: { 'cf-aig-authorization': `Bearer ${GATEWAY}`, 'x-team': 'core' } } });
  t.equal(updated.status, 200, JSON.stringify(updated.body));
  t.same(updated.body.spec.headers, { 'cf-aig-authorization': `Bearer ${GATEWAY}`, 'x-team': 'core' }, 'the answer shows the admin the values');
  t.notOk((await hostRow(route.hostId)).includes(GATEWAY), 'no plaintext value in the row');
  await eventually(() => relay.relay.sync.snapshot().hosts.get(route.hostId)?.spec.headers !== undefined && relay.relay.sync.snapshot().relayKeys.has(route.relayKeyId));
  t.notOk(JSON.stringify(relay.relay.sync.snapshot().hosts.get(route.hostId)).includes(GATEWAY), 'nor in the snapshot in memory');
  const file = path.join(relay.dataDir, LOCAL_SNAPSHOT_FILE);
  await eventually(async () => (await readFile(file, 'utf8').catch(() => '')).includes('cf-aig-authorization'), 5_000);
  const saved = await readFile(file, 'utf8');
  t.notOk(saved.includes(GATEWAY), 'nor in the local snapshot file');
  t.notOk(saved.includes(LEGACY), 'nor the legacy value');

  up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), text: 'ok' })) }));
  const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'gateway-gpt', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(answer.status, 200);
  t.equal(up.lastRequest()!.headers['cf-aig-authorization'], `Bearer ${GATEWAY}`, 'the upstream received the opened value');
  t.equal(up.lastRequest()!.headers['x-team'], 'core');
});

t.test('an upstream answer or error quoting a header value: the caller gets it masked', async (t) => {
  up.script(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: `gateway token ${GATEWAY} is over its quota`, type: 'invalid_request_error' } }) }));
  const refused = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'gateway-gpt', messages: [{ role: 'user', content: 'hi' }] });
  const refusedText = refused.text;
  t.equal(refused.status, 400);
  t.notOk(refusedText.includes(GATEWAY), 'the error body does not hold the value');
  t.match(refusedText, /gateway token \[redacted host key\]/, 'the rest of the message is kept');

  up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), text: `echo: Bearer ${GATEWAY}` })) }));
  const echoed = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'gateway-gpt', messages: [{ role: 'user', content: 'hi' }] });
  const echoedText = echoed.text;
  t.equal(echoed.status, 200);
  t.notOk(echoedText.includes(GATEWAY), 'an answer quoting it is masked too');

  // Through translation: an Anthropic-shaped caller of the OpenAI host.
  up.script(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: `bad subscription ${GATEWAY}`, type: 'invalid_request_error' } }) }));
  const translated = await viaRelay(relay, '/vendor-b/v1/messages', route.relayKey, { model: 'gateway-gpt', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  const translatedText = translated.text;
  t.equal(translated.status, 400, translatedText);
  t.notOk(translatedText.includes(GATEWAY), 'a translated error does not hold it either');
  up.script(undefined);
});

t.test('a header that is no secret (an app\'s referer URL) is left in answers; an unknown one is masked', async (t) => {
  const referer = 'https://internal-app.example.com/assistant';
  const mine = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'referer-gpt', upstreamModel: 'local-model' });
  const updated = await relay.api('PUT', `/api/hosts/by-id/${mine.hostId}`, { spec: { headers: { 'HTTP-Referer': referer, 'x-gateway-key': GATEWAY } } });
  t.equal(updated.status, 200, JSON.stringify(updated.body));
  await eventually(() => relay.relay.sync.snapshot().hosts.get(mine.hostId)?.spec.headers !== undefined && relay.relay.sync.snapshot().relayKeys.has(mine.relayKeyId));
  const quoting = `Sent from ${referer} with ${GATEWAY}`;
  up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), text: quoting })) }));
  const passed = await viaRelay(relay, '/vendor-a/v1/chat/completions', mine.relayKey, { model: 'referer-gpt', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(passed.status, 200);
  t.ok(passed.text.includes(referer), 'the referer URL reaches the caller intact (passed through)');
  t.notOk(passed.text.includes(GATEWAY), 'the unknown header\'s value is masked');
  const translated = await viaRelay(relay, '/vendor-b/v1/messages', mine.relayKey, { model: 'referer-gpt', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(translated.status, 200, translated.text);
  t.ok(translated.text.includes(referer), 'and translated');
  t.notOk(translated.text.includes(GATEWAY));
  up.script(undefined);
});

t.test('an update: the same value keeps its ciphertext, a new one is sealed; a bad sealed value or the mask is a 400', async (t) => {
  const before = await storedHeaders(route.hostId);
  const same = await relay.api('PUT', `/api/hosts/by-id/${route.hostId}`, { spec: { timeoutMs: 6_000, headers: { 'cf-aig-authorization': `Bearer ${GATEWAY}`, 'x-team': 'core' } } });
  t.equal(same.status, 200);
  t.same(await storedHeaders(route.hostId), before, 'unchanged values are not sealed again');
  const changed = await relay.api('PUT', `/api/hosts/by-id/${route.hostId}`, { spec: { headers: { 'cf-aig-authorization': `Bearer ${GATEWAY}`, 'x-team': 'platform' } } });
  t.equal(changed.status, 200);
  const after = await storedHeaders(route.hostId);
  t.equal(after['cf-aig-authorization'], before['cf-aig-authorization']);
  t.not(after['x-team'], before['x-team']);
  t.match(after['x-team'], /^v1\./);
  const forged = await relay.api('PUT', `/api/hosts/by-id/${route.hostId}`, { spec: { headers: { 'x-team': 'v1.deadbeef.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA' } } });
  t.equal(forged.status, 400);
  t.match(forged.body.error, { code: 'RELAY_ERR_BAD_REQUEST', field: '/spec/headers/x-team', message: /does not open/ });
  const masked = await relay.api('PUT', `/api/hosts/by-id/${route.hostId}`, { spec: { headers: { 'x-team': '********' } } });
  t.equal(masked.status, 400);
  t.match(masked.body.error, { field: '/spec/headers/x-team', message: /mask/ }, 'a viewer\'s mask sent back is not taken for the value');
  const control = await relay.api('PUT', `/api/hosts/by-id/${route.hostId}`, { spec: { headers: { 'x-team': 'a\nb' } } });
  t.match(control.body.error, { field: '/spec/headers/x-team', message: /U\+000A/ }, 'a plaintext value is still checked, not sealed as it is');
});

t.test('catalog export prints the values sealed; apply of the export round-trips', async (t) => {
  const exported = (await relay.api('GET', '/api/catalog/export')).body;
  const text = JSON.stringify(exported);
  for (const secret of [LEGACY, GATEWAY, 'platform']) t.notOk(text.includes(secret), `no ${secret} in the export`);
  t.match(exported.hosts.find((h: any) => h.slug === 'legacy').spec.headers, { 'ocp-apim-subscription-key': /^v1\./, 'x-team': /^v1\./ });

  const again = await relay.api('POST', '/api/catalog/apply', { document: exported });
  t.same(again.body.changes, [], 'applied to its own source: nothing changes');

  const otherDb = await createTestDatabase();
  t.teardown(() => otherDb.drop());
  const target = await start(masterKey, {}, otherDb.url);
  const first = await target.api('POST', '/api/catalog/apply', { document: exported });
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.same((await target.api('GET', '/api/hosts/legacy')).body.spec.headers, { 'ocp-apim-subscription-key': LEGACY, 'x-team': 'core' }, 'the target opens the same values');
  t.same((await target.api('POST', '/api/catalog/apply', { document: exported })).body.changes, [], 'a second apply is a no-op');

  // A file sealed under another master key does not open here: refused, naming the field.
  const foreignDb = await createTestDatabase();
  t.teardown(() => foreignDb.drop());
  const foreign = await start(generateMasterKey(), {}, foreignDb.url);
  const refused = await foreign.api('POST', '/api/catalog/apply', { document: { version: 1, providers: exported.providers, hosts: exported.hosts } });
  t.equal(refused.status, 400);
  t.match(refused.body.error, { field: /^hosts\/[\w-]+\/spec\/headers\/[\w-]+$/, message: /does not open/ });
  await stop(foreign);
  await stop(target);
});

t.test('a key rotation re-seals the values under the new key; the upstream still gets them', async (t) => {
  await stop(relay);
  const newKey = generateMasterKey();
  relay = await start(newKey, { RELAY_MASTER_KEY_PREVIOUS: masterKey });
  const newId = parseMasterKey(newKey).id;
  for (const id of [legacyId, route.hostId]) {
    for (const value of Object.values(await storedHeaders(id))) t.match(value, new RegExp(`^v1\\.${newId}\\.`), 'under the new key');
  }
  await eventually(() => relay.relay.sync.snapshot().relayKeys.has(route.relayKeyId));
  const answer = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'gateway-gpt', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(answer.status, 200);
  t.equal(up.lastRequest()!.headers['cf-aig-authorization'], `Bearer ${GATEWAY}`);
});
