// Relay-side rate limits (a `rate-limits` entity attached through a policy's rateLimitIds):
// requests per minute, concurrent requests and tokens per minute, per relay key; and two Relay
// instances sharing one limit through Redis.
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { startRelay, seedRoute, createTestDatabase, type Seeded, type TestRelay } from '../../core/testing.ts';
import { openai, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { readThenAbort, usageRecord, viaRelay, settled, type Answer } from '../support/relay-client.ts';

const REDIS_DB = 13;
const REDIS_URL = `redis://127.0.0.1:6379/${REDIS_DB}`;

const relay = await startRelay();
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

async function fake(options: Parameters<typeof startFakeUpstream>[0] = {}): Promise<FakeUpstream> {
  const up = await startFakeUpstream(options);
  upstreams.push(up);
  return up;
}

let seq = 0;
/** A model on `up` whose policy carries a rate limit with `spec`. */
async function limited(on: TestRelay, up: FakeUpstream, spec: Record<string, number>): Promise<Seeded> {
  const limit = await on.api('POST', '/api/rate-limits', { metadata: { displayName: `limit ${++seq}` }, spec });
  if (limit.status !== 201) throw new Error(`rate limit: ${limit.status} ${JSON.stringify(limit.body)}`);
  const s = await seedRoute(on, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `rl-${seq}`, policy: { rateLimitIds: [limit.body.metadata.id] } });
  await settled(on, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.rateLimits.has(limit.body.metadata.id) && snap.hostKeysOfHost(s.hostId).length > 0);
  return s;
}

const chat = (s: Seeded, relayKey = s.relayKey, on: TestRelay = relay): Promise<Answer> =>
  viaRelay(on, '/vendor-a/v1/chat/completions', relayKey, { model: s.modelSlug, messages: [{ role: 'user', content: 'hi' }] });

/** Per-minute limits count in fixed one-minute windows: start a burst well inside one. */
async function clearOfWindowEnd(needMs = 4_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 100));
}

function expectLimited(t: Test, got: Answer, what: RegExp): void {
  t.equal(got.status, 429, 'rate limited');
  const body = JSON.parse(got.text);
  t.equal(body.error.code, 'RELAY_ERR_RATE_LIMITED');
  t.match(body.error.message, what, 'names the limit');
  const seconds = Number(got.headers.get('retry-after'));
  t.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, `retry-after in whole seconds (${seconds})`);
  t.match(body.error.message, `try again in ${seconds}s`, 'the message says when, as retry-after does');
}

t.test('requests per minute, per relay key', async (t) => {
  const up = await fake();
  const s = await limited(relay, up, { requestsPerMinute: 3 });
  const sibling = await relay.api('POST', '/api/relay-keys', { metadata: { displayName: 'same policy' }, spec: { policyId: s.policyId } });
  await settled(relay, (snap) => snap.relayKeys.has(sibling.body.relayKey.metadata.id));
  await clearOfWindowEnd();
  for (let i = 0; i < 3; i++) t.equal((await chat(s)).status, 200, `request ${i + 1} is within the limit`);
  expectLimited(t, await chat(s), /requests per minute \(3\)/);
  t.equal(up.count, 3, 'the limited request never reached the upstream');
  t.equal((await chat(s, sibling.body.plaintext)).status, 200, 'another key under the same policy has its own budget');
});

t.test('concurrent requests: slots are held while a request (or stream) is in flight', async (t) => {
  const up = await fake({ headersDelayMs: 700 });
  const s = await limited(relay, up, { concurrentRequests: 2 });
  const slow = [chat(s), chat(s)];
  await up.waitForRequests(2);
  const started = Date.now();
  const third = await chat(s);
  expectLimited(t, third, /concurrent requests \(2\)/);
  t.ok(Date.now() - started < 500, 'refused at once, not queued');
  for (const got of await Promise.all(slow)) t.equal(got.status, 200, 'the requests in flight finish');
  t.equal((await chat(s)).status, 200, 'finished requests give their slots back');

  // A stream holds its slot until its last byte.
  up.configure({ headersDelayMs: 0, chunkDelayMs: 150, chunks: 4 });
  const before = up.count;
  const streams = [0, 1].map(() => viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, { model: s.modelSlug, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  await up.waitForRequests(before + 2);
  expectLimited(t, await chat(s), /concurrent requests/);
  for (const got of await Promise.all(streams)) t.equal(got.status, 200);
  t.equal((await chat(s)).status, 200);
});

t.test('tokens per minute: a request is refused once the window used the budget', async (t) => {
  // Each answer reports 12 input + 5 output tokens.
  const up = await fake({ inputTokens: 12, outputTokens: 5 });
  const s = await limited(relay, up, { tokensPerMinute: 30 });
  await clearOfWindowEnd();
  t.equal((await chat(s)).status, 200, '0 of 30 used');
  t.equal((await chat(s)).status, 200, '17 of 30 used');
  await new Promise((r) => setTimeout(r, 50)); // tokens are counted after the response
  expectLimited(t, await chat(s), /tokens per minute \(30\)/);
  t.equal(up.count, 2);
});

t.test('tokens per minute: answers cut before their usage count by their estimate', async (t) => {
  const up = await fake();
  const s = await limited(relay, up, { tokensPerMinute: 30 });
  await clearOfWindowEnd(10_000);
  // Each cut answer is metered by estimate (unreported-usage.ts): about 14 tokens.
  let served = 0;
  let limitedAt: number | null = null;
  for (let i = 0; i < 6 && limitedAt === null; i++) {
    up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30, includeUsage: true }), delayMs: 30 }, { path: '/v1/chat/completions' });
    const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, { model: s.modelSlug, stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.split('"content":').length > 20);
    const record = await usageRecord(relay, requestId);
    if (record.status === 429) limitedAt = i;
    else {
      served++;
      t.ok(record.input_tokens + record.output_tokens > 0, `cut #${served} metered (${record.input_tokens} + ${record.output_tokens}, ${record.extras.usage_estimated})`);
    }
  }
  t.ok(limitedAt !== null && served >= 2 && served <= 3, `refused once the estimates spent 30 tokens (after ${served} cut answers)`);
  expectLimited(t, await chat(s), /tokens per minute \(30\)/);
});

t.test('two Relay instances share one limit through Redis', async (t) => {
  const redis = new Redis(REDIS_URL);
  await redis.flushdb();
  await redis.quit();
  const db = await createTestDatabase();
  const config = { valkey: { url: REDIS_URL } };
  const a = await startRelay({ database: db.url, config });
  // One deployment: the same master key opens the stored host keys on every instance.
  const b = await startRelay({ database: db.url, config, masterKey: a.masterKey });
  t.teardown(async () => {
    await a.close();
    await b.close();
    await db.drop();
  });
  const up = await fake();
  const s = await limited(a, up, { requestsPerMinute: 2 });
  const slowUp = await fake({ headersDelayMs: 700 });
  const single = await limited(a, slowUp, { concurrentRequests: 1 });
  // The catalog reaches the other instance through Postgres NOTIFY.
  await settled(b, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.relayKeys.has(single.relayKeyId) && snap.rateLimits.size === 2
    && snap.hostKeysOfHost(single.hostId).length > 0);
  await clearOfWindowEnd();
  t.equal((await chat(s, s.relayKey, a)).status, 200, 'first request, on A');
  t.equal((await chat(s, s.relayKey, b)).status, 200, 'second request, on B');
  expectLimited(t, await chat(s, s.relayKey, a), /requests per minute \(2\)/);
  expectLimited(t, await chat(s, s.relayKey, b), /requests per minute \(2\)/);
  t.equal(up.count, 2, 'two requests in all reached the upstream');

  const held = chat(single, single.relayKey, a);
  await slowUp.waitForRequests(1);
  expectLimited(t, await chat(single, single.relayKey, b), /concurrent requests \(1\)/);
  t.equal((await held).status, 200, 'the request in flight on A finishes');
  t.equal((await chat(single, single.relayKey, b)).status, 200, "A's slot is free again for B");
});
