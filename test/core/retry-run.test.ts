// The retry policy's arithmetic (core/pipeline/retry-policy.ts): the backoff grows, is capped and
// jittered within its bounds; a retry-after is waited only up to maxRetryAfterMs; never past the
// deadline; a refused key never retried on itself; retryOn narrows and widens the statuses.
import t from 'tap';
import { RetryRun } from '../../core/pipeline/retry-policy.ts';

t.test('backoff: exponential, capped at maxMs, jitter takes off at most its fraction', async (t) => {
  const fixed = new RetryRun({ backoff: { initialMs: 100, maxMs: 1000, multiplier: 3, jitter: 0 } }, () => false);
  t.same([1, 2, 3, 4].map((n) => fixed.backoffMs(n)), [100, 300, 900, 1000]);
  fixed.close();
  const low = new RetryRun({ backoff: { initialMs: 1000, jitter: 0.5 } }, () => false, () => 0.999999);
  const high = new RetryRun({ backoff: { initialMs: 1000, jitter: 0.5 } }, () => false, () => 0);
  t.equal(high.backoffMs(1), 1000, 'no jitter drawn: the full wait');
  t.equal(low.backoffMs(1), 500, 'the most jitter takes off half');
  const defaults = new RetryRun({}, () => false, () => 0);
  t.same([1, 2, 6, 7].map((n) => defaults.backoffMs(n)), [200, 400, 5000, 5000], 'the defaults: 200 ms x2 up to 5 s');
});

t.test('sameBindingDelay: tries per binding, retry-after bound, refused keys, deadline', async (t) => {
  const run = new RetryRun({ attemptsPerBinding: 3, maxRetryAfterMs: 2000, backoff: { initialMs: 100, jitter: 0 } }, () => false);
  t.equal(run.sameBindingDelay(1, 'server', null), 100);
  t.equal(run.sameBindingDelay(2, 'timeout', null), 200);
  t.equal(run.sameBindingDelay(3, 'server', null), null, 'the third try was the last of this binding');
  t.equal(run.sameBindingDelay(1, 'rate_limit', 1500), 1500, 'a retry-after within the bound is waited');
  t.equal(run.sameBindingDelay(1, 'rate_limit', 2500), null, 'a longer one moves on');
  t.equal(run.sameBindingDelay(1, 'rate_limit', null), 100, 'a 429 without retry-after backs off');
  t.equal(run.sameBindingDelay(1, 'auth', null), null, 'a refused key is never tried again');
  const none = new RetryRun(undefined, () => false);
  t.equal(none.sameBindingDelay(1, 'server', null), null, 'no policy: one try per binding');
  const deadline = new RetryRun({ attemptsPerBinding: 2, deadlineMs: 150, backoff: { initialMs: 1000, jitter: 0 } }, () => false);
  t.equal(deadline.sameBindingDelay(1, 'server', null), null, 'a wait past the deadline is not taken');
  deadline.close();
});

t.test('verdict: retryOn narrows 5xx/429 and may widen to a 4xx; a refused key always moves on', async (t) => {
  const run = new RetryRun({ retryOn: [503, 409] }, () => false);
  t.same(run.verdict(500), { retryable: false, failure: 'server' }, 'a 500 not listed is the answer (health still learns)');
  t.same(run.verdict(503), { retryable: true, failure: 'server' });
  t.same(run.verdict(409), { retryable: true, failure: null }, 'a listed 4xx is retried without marking the key');
  t.same(run.verdict(401), { retryable: true, failure: 'auth' });
  t.same(new RetryRun(undefined, () => false).verdict(429), { retryable: true, failure: 'rate_limit' }, 'no policy: as before');
});

t.test('maxAttempts: mayTry and lastAllowed', async (t) => {
  const run = new RetryRun({ maxAttempts: 2 }, () => false);
  t.ok(run.mayTry(1));
  t.notOk(run.mayTry(2));
  t.notOk(run.lastAllowed(0));
  t.ok(run.lastAllowed(1));
});

t.test('the deadline aborts its signal, unless the answer is already committed', async (t) => {
  const run = new RetryRun({ deadlineMs: 100 }, () => false);
  await new Promise((r) => setTimeout(r, 150));
  t.ok(run.deadlineSignal!.aborted);
  t.throws(() => run.checkDeadline(), { code: 'RELAY_ERR_RETRY_DEADLINE' });
  const committed = new RetryRun({ deadlineMs: 100 }, () => true);
  await new Promise((r) => setTimeout(r, 150));
  t.notOk(committed.deadlineSignal!.aborted, 'an answer on its way is never cut');
});
