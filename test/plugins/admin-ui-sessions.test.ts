// The dashboard's Sessions pages: how a session's duration, cache hit ratio and models read.
// (The pages themselves are in test/e2e/dashboard.test.ts; their API types are pinned to core's
// by test/support/admin-ui-api-types.ts.)
import t from 'tap';
import { formatDuration, formatRatio, modelsLine } from '../../admin-ui/src/sessions/session-format.ts';

t.test('durations read in the largest fitting units', async (t) => {
  t.equal(formatDuration(32), '32 ms');
  t.equal(formatDuration(42_400), '42 s');
  t.equal(formatDuration(754_000), '12 min 34 s');
  t.equal(formatDuration(2 * 3_600_000 + 5 * 60_000 + 10_000), '2 h 5 min');
});

t.test('cache hit ratio as a percentage; none without prompt tokens', async (t) => {
  t.equal(formatRatio(0.9524), '95.2%');
  t.equal(formatRatio(0), '0.0%');
  t.equal(formatRatio(null), '—');
});

t.test('models: two named, the rest counted', async (t) => {
  t.equal(modelsLine({ models: [] }), '—');
  t.equal(modelsLine({ models: ['a', 'b'] }), 'a, b');
  t.equal(modelsLine({ models: ['a', 'b', 'c', 'd'] }), 'a, b +2');
});
