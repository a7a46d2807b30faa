// A reference written at the same moment as its target is deleted (on a real Postgres, where the
// two transactions run concurrently): either the delete is refused (409, the reference exists) or
// the write is (400, the target is gone), never both accepted, which would leave the reference
// pointing at nothing. The store locks referenced rows FOR KEY SHARE (checkReferences).
import t from 'tap';
import { openDatabase } from '../../core/db/open.ts';
import { migrate } from '../../core/db/migrate.ts';
import { CatalogStore } from '../../core/catalog/store.ts';
import { createTestDatabase } from '../../core/testing.ts';

const testDb = await createTestDatabase();
const db = await openDatabase({ url: testDb.url });
t.teardown(async () => {
  await db.close();
  await testDb.drop();
});
await migrate(db);
const store = new CatalogStore(db);

t.test('a relay key created while its policy is deleted', async (t) => {
  let bothAccepted = 0;
  const outcomes = new Set<string>();
  for (let round = 0; round < 40; round++) {
    const policy = await store.create('policies', { displayName: `p${round}` }, { tier: 'relay', modelIds: '*' });
    const [created, deleted] = await Promise.allSettled([
      store.create('relay-keys', { displayName: `k${round}` }, { policyId: policy.metadata.id, prefix: 'rk_test' }, { secretHash: `hash-${round}` }),
      store.delete('policies', policy.metadata.id),
    ]);
    outcomes.add(`${created.status}/${deleted.status}`);
    if (created.status === 'rejected' && !/RELAY_ERR_BAD_REQUEST/.test(String((created.reason as { code?: string }).code))) throw created.reason;
    if (deleted.status === 'rejected' && (deleted.reason as { code?: string }).code !== 'RELAY_ERR_IN_USE') throw deleted.reason;
    if (created.status === 'fulfilled' && deleted.status === 'fulfilled') bothAccepted++;
  }
  t.equal(bothAccepted, 0, 'never both accepted');
  const dangling = await db.query(`SELECT k.id FROM catalog_entities k LEFT JOIN catalog_entities p ON p.id = (k.spec->>'policyId')::uuid
    WHERE k.kind = 'relay-keys' AND p.id IS NULL`);
  t.equal(dangling.rows.length, 0, 'no relay key names a policy that is gone');
  t.ok(outcomes.has('fulfilled/rejected') || outcomes.has('rejected/fulfilled'), `the two met (outcomes, create/delete: ${[...outcomes].join(', ')})`);
});
