// Retry policies (issue 42 item 2), through real HTTP to fake upstreams: tries of one binding with
// backoff, the longest retry-after worth waiting for, the statuses retried, a total attempt bound
// and a deadline before the first byte; bad values are a 400 naming the field.
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, faults, type FakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay({ logLevel: 'warn' });
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  for (const up of upstreams) await up.close();
});

let n = 0;
/** A fresh OpenAI model (own upstream, own keys) with `retry` as its policy. */
async function model(retry: Record<string, unknown> | undefined, hostKeys?: string[]): Promise<{ up: FakeUpstream; seeded: Seeded; slug: string }> {
  const up = await startFakeUpstream();
  upstreams.push(up);
  const slug = `rp-${++n}`;
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: slug, ...(hostKeys ? { hostKeys } : {}), model_spec: retry ? { retry } : {} });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.hostKeysOfHost(seeded.hostId).length === (hostKeys?.length ?? 1)
    && JSON.stringify(s.models.get(seeded.modelId)?.spec.retry ?? null) !== undefined);
  return { up, seeded, slug };
}
const chat = (slug: string) => ({ model: slug, messages: [{ role: 'user', content: 'hi' }] });
const send = (m: { seeded: Seeded; slug: string }) => viaRelay(relay, '/vendor-a/v1/chat/completions', m.seeded.relayKey, chat(m.slug));

t.test('attemptsPerBinding retries the same key with exponential backoff, then succeeds', async (t) => {
  const m = await model({ attemptsPerBinding: 3, backoff: { initialMs: 150, multiplier: 2, jitter: 0 } });
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 500 }));
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 503 }));
  const started = Date.now();
  const res = await send(m);
  const took = Date.now() - started;
  t.equal(res.status, 200, res.text);
  t.equal(m.up.count, 3, 'three tries of the one binding');
  t.ok(took >= 150 + 300, `waited the backoff between tries (${took} ms)`);
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.attempts, 3);
  const host = JSON.parse(record.extras.relay_attempts)[0].host;
  t.same(JSON.parse(record.extras.relay_attempts), [
    { model: m.slug, host, outcome: 'server', status: 500, waitMs: 150 },
    { model: m.slug, host, outcome: 'server', status: 503, waitMs: 300 },
    { model: m.slug, host, outcome: 'answered', status: 200 },
  ], 'the record lists each try, why it moved on and the wait');
  const metrics = String((await relay.api<string>('GET', '/metrics')).body);
  t.match(metrics, new RegExp(`relay_upstream_retries_total\\{model="${m.slug}",reason="server"\\} 2`), '/metrics counts the retries by model and reason');
});

t.test('without a policy a single binding is tried once, as before', async (t) => {
  const m = await model(undefined);
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 500 }));
  const res = await send(m);
  t.equal(res.status, 500, 'the upstream\'s own answer');
  t.equal(m.up.count, 1);
});

t.test('a 429 whose retry-after is within maxRetryAfterMs is waited out on the same key', async (t) => {
  const m = await model({ attemptsPerBinding: 2, maxRetryAfterMs: 2_000 });
  m.up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 1 }));
  const started = Date.now();
  const res = await send(m);
  const took = Date.now() - started;
  t.equal(res.status, 200, res.text);
  t.equal(m.up.count, 2);
  t.ok(took >= 950, `waited the retry-after (${took} ms)`);
});

t.test('a 429 whose retry-after is beyond maxRetryAfterMs is not waited for: Relay answers 429 with it', async (t) => {
  const m = await model({ attemptsPerBinding: 2, maxRetryAfterMs: 2_000 });
  m.up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 30 }));
  const started = Date.now();
  const res = await send(m);
  t.ok(Date.now() - started < 1_500, 'no wait');
  t.equal(res.status, 429, res.text);
  t.equal(res.headers.get('retry-after'), '30', "the upstream's retry-after");
  t.equal(JSON.parse(res.text).error.code, 'RELAY_ERR_UPSTREAM_RATE_LIMITED');
  t.equal(m.up.count, 1);
});

t.test('retryOn: a status not listed is the client\'s answer; a listed one moves to the next key', async (t) => {
  const m = await model({ retryOn: [503] }, ['sk-a', 'sk-b']);
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 500 }));
  const passed = await send(m);
  t.equal(passed.status, 500, 'a 500 is not in retryOn: passed through at once');
  t.equal(m.up.count, 1, 'the second key was not tried');
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 503 }));
  const moved = await send(m);
  t.equal(moved.status, 200, moved.text);
  t.equal(m.up.count, 3, 'a 503 moved to the other key');
});

t.test('maxAttempts bounds the tries in all: the last allowed failure is the answer', async (t) => {
  const m = await model({ maxAttempts: 1 }, ['sk-a', 'sk-b']);
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 502 }));
  const res = await send(m);
  t.equal(res.status, 502, res.text);
  t.equal(m.up.count, 1, 'the second key was not tried');
});

t.test('deadlineMs cancels a stalled attempt and answers 504 in time', async (t) => {
  const m = await model({ attemptsPerBinding: 3, deadlineMs: 700 });
  m.up.enqueue({ kind: 'stall' });
  const started = Date.now();
  const res = await send(m);
  const took = Date.now() - started;
  t.equal(res.status, 504, res.text);
  t.equal(JSON.parse(res.text).error.code, 'RELAY_ERR_RETRY_DEADLINE');
  t.ok(took >= 650 && took < 2_500, `answered at the deadline, not the host timeout (${took} ms)`);
  t.equal(m.up.count, 1, 'no try started after the deadline');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(JSON.parse(record.extras.relay_attempts), [{ model: m.slug, outcome: 'deadline' }]);
  t.equal(record.error_code, 'RELAY_ERR_RETRY_DEADLINE');
});

t.test("the deadline never cuts an answer already streaming", async (t) => {
  // The first output frame comes within ~500 ms, the last ~2 s later: well past the deadline.
  const m = await model({ deadlineMs: 800 });
  m.up.configure({ chunkDelayMs: 250, chunks: 5 });
  const started = Date.now();
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', m.seeded.relayKey, { ...chat(m.slug), stream: true });
  t.equal(res.status, 200, res.text);
  t.match(res.text, /\[DONE\]/, 'the stream ran to its end past the deadline');
  t.ok(Date.now() - started > 800, 'and it did run past it');
});

t.test("a policy's retry applies to its models that have none of their own", async (t) => {
  const m = await model(undefined);
  t.equal((await relay.api('PUT', `/api/policies/by-id/${m.seeded.policyId}`, { spec: { retry: { attemptsPerBinding: 2, backoff: { initialMs: 0 } } } })).status, 200);
  await settled(relay, (s) => s.policies.get(m.seeded.policyId)?.spec.retry?.attemptsPerBinding === 2);
  m.up.enqueue(faults.serverError({ vendor: 'openai', status: 500 }));
  const res = await send(m);
  t.equal(res.status, 200, res.text);
  t.equal(m.up.count, 2);
});

t.test('bad retry policies are a 400 naming the field', async (t) => {
  const m = await model(undefined);
  const put = (retry: unknown) => relay.api('PUT', `/api/models/by-id/${m.seeded.modelId}`, { spec: { retry } });
  const cases: Array<[unknown, RegExp]> = [
    [{ attemptsPerBinding: 0 }, /attemptsPerBinding/],
    [{ maxAttempts: 1.5 }, /maxAttempts/],
    [{ backoff: { initialMs: 500, maxMs: 100 } }, /maxMs/],
    [{ backoff: { jitter: 2 } }, /jitter/],
    [{ retryOn: [200] }, /retryOn/],
    [{ deadlineMs: 5 }, /deadlineMs/],
    [{ retries: 3 }, /retries/],
  ];
  for (const [retry, names] of cases) {
    const res = await put(retry);
    t.equal(res.status, 400, JSON.stringify(retry));
    t.match(JSON.stringify(res.body), names, `names the field: ${JSON.stringify(res.body)}`);
  }
  const policy = await relay.api('PUT', `/api/policies/by-id/${m.seeded.policyId}`, { spec: { retry: { maxRetryAfterMs: -1 } } });
  t.equal(policy.status, 400);
  t.match(JSON.stringify(policy.body), /maxRetryAfterMs/);
});
