// A budget's scope names one relay key, one policy, one model, or (empty) everything
// (docs/operations.md, Budgets): a create or an update naming two is a 400 naming /spec/scope, and
// the stored budget is left as it was. A row naming two written past the API (by hand, in the
// database) does not stop Relay from starting: it loads, and its read answers.
import t from 'tap';
import pg from 'pg';
import { createTestDatabase, startRelay, seedRoute, type TestRelay } from '../../core/testing.ts';

const db = await createTestDatabase();
let relay: TestRelay = await startRelay({ database: db.url });
t.teardown(async () => {
  await relay.close();
  await db.drop();
});

const route = await seedRoute(relay, { baseUrl: 'http://127.0.0.1:9/v1', adapter: 'openai', model: 'scope-gpt', upstreamModel: 'local-model' });

t.test('create naming two scope fields: 400 naming /spec/scope', async (t) => {
  const res = await relay.api<any>('POST', '/api/budgets', {
    metadata: { displayName: 'two scopes' },
    spec: { scope: { relayKeyId: route.relayKeyId, policyId: route.policyId }, window: 'daily', limitAmount: 1 },
  });
  t.equal(res.status, 400);
  t.equal(res.body.error?.code ?? res.body.code, 'RELAY_ERR_BAD_REQUEST', JSON.stringify(res.body));
  t.match(JSON.stringify(res.body), /"\/spec\/scope"/, 'the field is named');
  t.match(JSON.stringify(res.body), /relayKeyId and policyId/, 'the message says which two');
  const list = await relay.api<any>('GET', '/api/budgets');
  t.notOk(list.body.items.some((b: any) => b.metadata.displayName === 'two scopes'), 'nothing stored');
});

t.test('update naming two scope fields: 400 naming /spec/scope, the budget unchanged', async (t) => {
  const created = await relay.api<any>('POST', '/api/budgets', {
    metadata: { displayName: 'one scope' }, spec: { scope: { relayKeyId: route.relayKeyId }, window: 'daily', limitAmount: 1 },
  });
  t.equal(created.status, 201);
  const id = created.body.metadata.id;
  for (const scope of [{ relayKeyId: route.relayKeyId, modelId: route.modelId }, { policyId: route.policyId, modelId: route.modelId }]) {
    const res = await relay.api<any>('PUT', `/api/budgets/by-id/${id}`, { spec: { scope } });
    t.equal(res.status, 400, JSON.stringify(scope));
    t.match(JSON.stringify(res.body), /"\/spec\/scope"/, 'the field is named');
  }
  const read = await relay.api<any>('GET', `/api/budgets/${id}`);
  t.same(read.body.spec.scope, { relayKeyId: route.relayKeyId }, 'the stored scope is as it was');
  // One field for another is an edit, not a second field.
  const moved = await relay.api<any>('PUT', `/api/budgets/by-id/${id}`, { spec: { scope: { policyId: route.policyId } } });
  t.equal(moved.status, 200);
  t.same(moved.body.spec.scope, { policyId: route.policyId });
});

t.test('a stored budget naming two (written past the API) does not stop start-up', async (t) => {
  const created = await relay.api<any>('POST', '/api/budgets', {
    metadata: { displayName: 'legacy two' }, spec: { scope: { relayKeyId: route.relayKeyId }, window: 'daily', limitAmount: 1 },
  });
  t.equal(created.status, 201);
  const id = created.body.metadata.id;
  await relay.close();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query("UPDATE catalog_entities SET spec = jsonb_set(spec, '{scope,policyId}', to_jsonb($2::text)) WHERE id = $1", [id, route.policyId]);
  } finally {
    await client.end();
  }
  relay = await startRelay({ database: db.url });
  const read = await relay.api<any>('GET', `/api/budgets/${id}`);
  t.equal(read.status, 200);
  t.same(read.body.spec.scope, { relayKeyId: route.relayKeyId, policyId: route.policyId }, 'loaded as stored');
  const status = await relay.api<any>('GET', `/api/budgets/${id}/status`);
  t.equal(status.status, 200, JSON.stringify(status.body));
});
