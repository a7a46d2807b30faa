// A usage log that hangs (log-postgres behind a proxy that accepts and never replies) while a
// refusing budget's first read is under way: requests under it get the 503 while it hangs, a read
// that ends without an answer (past its deadline, or failed first by the usage log's own pool
// deadlines) is logged and a fresh one started, and once Postgres answers again the budget admits
// and refuses by its real spend, without restarting Relay.
import t from 'tap';
import { createTestDatabase, DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { startHangingProxy } from '../support/hanging-proxy.ts';
import { settled, usageRecord, viaRelay, type Answer } from '../support/relay-client.ts';

// Above the 5 s a read first waits for this instance's queued usage (a write held by the hang never ends).
const READ_TIMEOUT_MS = 7_000;
const password = 'usage-log-s3cret';
const usageDb = await createTestDatabase();
const proxy = await startHangingProxy(5432);
const url = new URL(usageDb.url);
url.port = String(proxy.port);
url.password = password;
const lines: Array<{ msg: string; budget?: string }> = [];
const raw: string[] = [];
const up = await startFakeUpstream();
let calls = 0;
up.script((req) => {
  calls += 1;
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(openai.chatCompletion({ model: String(req.json?.model), inputTokens: 500, outputTokens: 500 })) };
});
const relay = await startRelay({
  database: 'pglite',
  // Held connections never come back: room in the pool for the reads started after them.
  plugins: [...DEFAULT_TEST_PLUGINS, { use: 'log-postgres', options: { url: url.toString(), poolSize: 12 } }],
  config: { budgets: { readTimeoutMs: READ_TIMEOUT_MS } },
  logLevel: 'warn',
  logStream: { write(line: string) { raw.push(line); lines.push(JSON.parse(line)); } },
});
t.teardown(async () => {
  // The held connections first: the usage log's pool ends, and its queue drains, once they are gone.
  proxy.dropHeld();
  await relay.close();
  await proxy.close();
  await up.close();
  await usageDb.drop();
});

/** Asks until `done` holds for the answer or the time is up; the last answer either way. */
async function askUntil(ask: () => Promise<Answer>, done: (res: Answer) => boolean, timeoutMs: number, everyMs: number): Promise<Answer> {
  let last!: Answer;
  await eventually(async () => done(last = await ask()), timeoutMs, everyMs).catch(() => undefined);
  return last;
}

t.test('a hung first read: 503 while it hangs, then the real spend once the usage log answers again', async (t) => {
  t.equal((await relay.api('PUT', '/api/settings/usage-logging', { backend: 'postgres' })).status, 200);
  await eventually(() => relay.relay.settings.get('usage-logging').backend === 'postgres');
  const route = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'hang-gpt', upstreamModel: 'local-model' });
  // 1,000 tokens at 1,000 per million: $1 a request.
  await relay.api('POST', '/api/pricings', { metadata: { displayName: 'hang price' }, spec: { modelId: route.modelId, inputPerMillion: 1000, outputPerMillion: 1000 } });
  await settled(relay, (s) => s.relayKeys.has(route.relayKeyId) && s.pricings.size === 1);
  const chat = () => viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'hang-gpt', messages: [{ role: 'user', content: 'hi' }] });
  for (let i = 0; i < 2; i++) {
    const res = await chat();
    t.equal(res.status, 200);
    await usageRecord(relay, res.headers.get('x-request-id')!);
  }

  proxy.hang();
  const budget = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'Three dollars' }, spec: { scope: { relayKeyId: route.relayKeyId }, window: 'lifetime', limitAmount: 3 } });
  t.equal(budget.status, 201);
  const slug: string = budget.body.metadata.slug;
  await settled(relay, (s) => s.byKind('budgets').has(budget.body.metadata.id));
  const before = calls;
  const unknown = await chat();
  t.equal(unknown.status, 503, 'its spend cannot be read: refused, not admitted');
  t.match(JSON.parse(unknown.text).error, { code: 'RELAY_ERR_BUDGET_UNAVAILABLE', message: /Three dollars.*Retry shortly/ });
  t.equal(unknown.headers.get('retry-after'), '1');

  // The pool's connect deadline (5 s) fails the read before its own deadline (7 s) does.
  const unanswered = () => lines.filter((l) => l.budget === slug && /did not answer within|from the usage log failed/.test(l.msg));
  await eventually(() => unanswered().length > 0, 4 * READ_TIMEOUT_MS, 100).catch(() => undefined);
  t.equal(unanswered().length, 1, 'the read that got no answer is logged once, naming the budget');
  t.notMatch(raw.join(''), password, 'no secret of the usage log\'s URL in the log');
  const still = await chat();
  t.equal(still.status, 503, 'still hanging: still refused (a timed-out read counts nothing)');
  t.equal(calls, before, 'nothing reached the upstream while the spend was unknown');

  proxy.answer();
  const served = await askUntil(chat, (res) => res.status !== 503, 8 * READ_TIMEOUT_MS, 200);
  t.equal(served.status, 200, 'the usage log answers again: $2 of $3 spent, admitted');
  const refused = await askUntil(chat, (res) => res.status !== 200, 10_000, 50);
  t.equal(refused.status, 429, 'then $3 of $3: refused as spent');
  t.match(JSON.parse(refused.text).error, { code: 'RELAY_ERR_BUDGET_EXCEEDED' });
});
