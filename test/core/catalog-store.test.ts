// The catalog store and snapshot sync, run twice: on embedded PGlite and on a real Postgres 15.
import t, { type Test } from 'tap';
import pino from 'pino';
import { openDatabase } from '../../core/db/open.ts';
import { migrate } from '../../core/db/migrate.ts';
import type { Database } from '../../core/db/types.ts';
import { CatalogStore } from '../../core/catalog/store.ts';
import { CatalogSync } from '../../core/catalog/sync.ts';
import { RelayError } from '../../core/errors.ts';
import { createTestDatabase, eventually } from '../../core/testing.ts';

const log = pino({ level: 'silent' });

function relayError(code: string, field?: string) {
  return (err: unknown) => err instanceof RelayError && err.code === code && (field === undefined || err.field === field);
}

async function expectError(t: Test, p: Promise<unknown>, code: string, field?: string): Promise<void> {
  try {
    await p;
    t.fail(`expected ${code}`);
  } catch (err) {
    t.ok(relayError(code, field)(err), `${code}${field ? ` at ${field}` : ''} (got ${(err as RelayError).code} ${(err as RelayError).field ?? ''}: ${(err as Error).message})`);
  }
}

async function suite(t: Test, db: Database): Promise<void> {
  t.ok((await migrate(db)).includes('001_catalog'), 'migrations apply');
  t.same(await migrate(db), [], 'migrations are idempotent');
  const store = new CatalogStore(db);
  const sync = new CatalogSync(db, store, log, { checkIntervalMs: 200 });
  await sync.start();
  t.teardown(() => sync.stop());

  const provider = await store.create('providers', { displayName: 'Open AI' }, { adapter: 'openai' });
  t.equal(provider.metadata.slug, 'open-ai', 'slug derived from the display name');
  t.match(provider.metadata.id, /^[0-9a-f-]{36}$/);
  const twin = await store.create('providers', { displayName: 'Open AI' }, { adapter: 'openai' });
  t.equal(twin.metadata.slug, 'open-ai-2', 'slugs stay unique');
  const proposed = await store.create('providers', { displayName: 'Anthropic', slug: 'anth' }, { adapter: 'anthropic' });
  t.equal(proposed.metadata.slug, 'anth', 'a valid proposed slug is kept');
  await expectError(t, store.create('providers', { displayName: 'x', slug: 'anth' }, { adapter: 'a' }), 'RELAY_ERR_CONFLICT', '/metadata/slug');
  await expectError(t, store.create('providers', { displayName: 'x', slug: 'Bad Slug' }, { adapter: 'a' }), 'RELAY_ERR_BAD_REQUEST', '/metadata/slug');

  const host = await store.create('hosts', { displayName: 'api' }, { providerId: provider.metadata.id, baseUrl: 'https://api.example.com/v1' });
  t.equal((host.spec as { enabled: boolean }).enabled, true, 'defaults are filled in');
  await expectError(t, store.create('hosts', { displayName: 'bad' }, { providerId: '00000000-0000-4000-8000-000000000000', baseUrl: 'https://x' }), 'RELAY_ERR_BAD_REQUEST', '/spec/providerId');
  await expectError(t, store.create('hosts', { displayName: 'bad' }, { providerId: provider.metadata.id, baseUrl: 42 }), 'RELAY_ERR_BAD_REQUEST', '/spec/baseUrl');
  await expectError(t, store.create('hosts', { displayName: 'bad' }, { providerId: provider.metadata.id, baseUrl: 'https://x', colour: 'red' }), 'RELAY_ERR_BAD_REQUEST', '/spec/colour');
  await expectError(t, store.create('hosts', { displayName: 'bad' }, { baseUrl: 'https://x' }), 'RELAY_ERR_BAD_REQUEST', '/spec/providerId');

  const model = await store.create('models', { displayName: 'gpt-4.1', slug: 'gpt-4.1' }, { bindings: [{ hostId: host.metadata.id, upstreamModel: 'gpt-4.1' }] });
  await expectError(t, store.delete('hosts', host.metadata.id), 'RELAY_ERR_IN_USE');

  // read by id and by slug; a UUID-form ref prefers the id
  t.equal((await store.get('models', model.metadata.id))?.metadata.slug, 'gpt-4.1');
  t.equal((await store.get('models', 'gpt-4.1'))?.metadata.id, model.metadata.id);
  t.equal(await store.get('models', 'nope'), null);

  // partial update merges into the stored spec
  const updated = await store.update('hosts', host.metadata.id, { spec: { timeoutMs: 1234 } });
  t.equal((updated.spec as { timeoutMs: number }).timeoutMs, 1234);
  t.equal((updated.spec as { baseUrl: string }).baseUrl, 'https://api.example.com/v1', 'other fields kept');
  await expectError(t, store.update('hosts', host.metadata.id, { spec: { timeoutMs: 'soon' } }), 'RELAY_ERR_BAD_REQUEST', '/spec/timeoutMs');
  await expectError(t, store.update('hosts', '00000000-0000-4000-8000-000000000000', { spec: {} }), 'RELAY_ERR_NOT_FOUND');
  // Reasoning levels are canonical efforts, so that every route (translated too) can carry them.
  await expectError(t, store.update('models', model.metadata.id, { spec: { reasoning: true, reasoningLevels: ['low', 'max'] } }), 'RELAY_ERR_BAD_REQUEST', '/spec/reasoningLevels/1');

  // pagination is ordered and complete
  for (let i = 0; i < 7; i++) await store.create('rate-limits', { displayName: `limit ${i}` }, { requestsPerMinute: i + 1 });
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list('rate-limits', { limit: 3, cursor });
    seen.push(...page.items.map((e) => e.metadata.slug));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  t.same(seen, [0, 1, 2, 3, 4, 5, 6].map((i) => `limit-${i}`), 'pages walk every entity once, in creation order');
  t.equal((await store.list('rate-limits', { q: 'LIMIT 3' })).items.length, 1, 'search is case-insensitive');
  await expectError(t, store.list('rate-limits', { cursor: 'garbage' }), 'RELAY_ERR_BAD_REQUEST', 'cursor');

  // the snapshot follows every write through NOTIFY
  await eventually(() => sync.snapshot().modelBySlug('gpt-4.1')?.metadata.id === model.metadata.id, 2_000);
  await eventually(() => (sync.snapshot().hosts.get(host.metadata.id)?.spec.timeoutMs ?? 0) === 1234, 2_000);
  await store.update('models', model.metadata.id, { spec: { bindings: [] } });
  await store.delete('hosts', host.metadata.id);
  await eventually(() => !sync.snapshot().hosts.has(host.metadata.id), 2_000);
  t.equal(sync.snapshot().hostKeysOfHost(host.metadata.id).length, 0);

  // a write the notification missed is caught by the revision check
  await db.query(`UPDATE catalog_entities SET display_name = 'renamed', revision = nextval('catalog_revision') WHERE id = $1`, [model.metadata.id]);
  await eventually(() => sync.snapshot().models.get(model.metadata.id)?.metadata.displayName === 'renamed', 3_000);
  t.pass('snapshot converges');
}

t.test('on PGlite', async (t) => {
  const db = await openDatabase({ dataDir: null });
  t.teardown(() => db.close());
  await suite(t, db);
});

t.test('on Postgres', async (t) => {
  const testDb = await createTestDatabase();
  const db = await openDatabase({ url: testDb.url });
  t.teardown(async () => {
    await db.close();
    await testDb.drop();
  });
  await suite(t, db);
});
