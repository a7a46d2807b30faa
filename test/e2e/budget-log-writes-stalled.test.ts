// A usage log whose writes stall while its reads still answer (log-postgres with its table locked
// for writes, as CREATE INDEX does): a budget's reconcile reads the log before the spend this
// instance queued for it is written. It used to take that figure as counting the queued spend, so
// each reconcile forgot it and a refusing budget kept admitting requests for as long as the writes
// stalled. The figure is now merged by max and the queued spend kept until the log has it.
import t from 'tap';
import pg from 'pg';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { QUEUE_WAIT_MS } from '../../core/budgets/spend-from-log.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const RECONCILE_MS = 200;
const up = await startFakeUpstream();
// 40 tokens a request: the third passes the 100-token budget.
up.script((req) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 30, outputTokens: 10 })) }));
const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'log-postgres' }], config: { budgets: { reconcileMs: RECONCILE_MS } } });
const locker = new pg.Client({ connectionString: relay.databaseUrl! });
await locker.connect();
t.teardown(async () => {
  await locker.end().catch(() => {});
  await relay.close();
  await up.close();
});

t.test('spend queued behind stalled writes is not forgotten by the reconciles that read the log meanwhile', async (t) => {
  t.equal((await relay.api('PUT', '/api/settings/usage-logging', { backend: 'postgres' })).status, 200);
  await eventually(() => relay.relay.settings.get('usage-logging').backend === 'postgres');
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'stalled-log-gpt', upstreamModel: 'local-model' });
  const budget = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'Stalled log cap' }, spec: { scope: { relayKeyId: route.relayKeyId }, window: 'daily', limitTokens: 100, action: 'refuse' } });
  t.equal(budget.status, 201);
  const id = budget.body.metadata.id as string;
  await eventually(() => relay.relay.sync.snapshot().byKind('budgets').has(id) && relay.relay.sync.snapshot().relayKeys.has(route.relayKeyId));
  const chat = () => viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'stalled-log-gpt', messages: [{ role: 'user', content: 'hi' }] });
  const spent = async () => (await relay.api<any>('GET', `/api/budgets/${id}/status`)).body.spentTokens as number;

  // Writes to the usage table wait for the lock; reads do not.
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE relay_usage_events IN SHARE MODE');
  for (let i = 0; i < 3; i++) t.equal((await chat()).status, 200, `request ${i + 1} admitted`);
  t.equal(await spent(), 120, 'three requests counted');
  // Reconciles run meanwhile, each after its bounded wait for the queue, and read a log without them.
  // Each status read may start one; sampled past the first reconcile's bounded wait and its answer.
  const seen: number[] = [];
  for (const until = Date.now() + QUEUE_WAIT_MS + 3_000; Date.now() < until;) {
    seen.push(await spent());
    await new Promise((resolve) => setTimeout(resolve, RECONCILE_MS));
  }
  t.equal(Math.min(...seen), 120, `still counted after the log was read without them (${seen.length} readings)`);
  const refused = await chat();
  t.equal(refused.status, 429, 'the budget still refuses');
  t.match(JSON.parse(refused.text).error, { code: 'RELAY_ERR_BUDGET_EXCEEDED' });

  // Once written, a reconcile counts them once, from the log.
  await locker.query('COMMIT');
  const last = (await chat()).headers.get('x-request-id')!;
  await usageRecord(relay, last); // the refused request's record is written, so those before it were
  await new Promise((resolve) => setTimeout(resolve, 3 * RECONCILE_MS + 500)); // reconciles that found the queue written
  t.equal(await spent(), 120, 'counted once, not twice, once in the log');
});
