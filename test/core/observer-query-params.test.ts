// The time filters of /api/logs and /api/usage/*: dates that do not exist and durations past
// what a Date holds are 400s naming the parameter, not a rolled-over date, a RangeError or an
// Invalid Date that silently drops the filter.
import t from 'tap';
import { MAX_BUCKET_SECONDS, parseBucket, parseDateTime, parseFilter, parseSince } from '../../core/observer/query-params.ts';

const now = Date.parse('2026-03-01T00:00:00Z');
const YEAR_0_MS = Date.parse('0000-01-01T00:00:00Z');

t.test('dates that do not exist', async (t) => {
  for (const value of ['2026-02-30', '2026-02-29', '1900-02-29', '2026-04-31T10:00:00Z', '2026-13-01', '2026-00-10', '2026-01-00']) {
    t.throws(() => parseDateTime('from', value), { code: 'RELAY_ERR_BAD_REQUEST', field: 'from', message: /does not exist/ }, value);
  }
  for (const value of ['2026-01-01T24:00:00Z', '2026-01-01T23:60Z', '2026-01-01T23:59:60Z', '2026-01-01T10:00+24:00', '2026-01-01T10:00+01:60']) {
    t.throws(() => parseDateTime('to', value), { code: 'RELAY_ERR_BAD_REQUEST', field: 'to' }, value);
  }
  t.equal(parseDateTime('from', '2024-02-29').toISOString(), '2024-02-29T00:00:00.000Z', 'a leap day');
  t.equal(parseDateTime('from', '2000-02-29T12:00:00Z').toISOString(), '2000-02-29T12:00:00.000Z', '2000 is a leap year');
  t.equal(parseDateTime('from', '2026-01-31T23:59:59.999+01:00').toISOString(), '2026-01-31T22:59:59.999Z');
  t.equal(parseDateTime('from', '0000-01-01').getTime(), YEAR_0_MS, 'year 0 is the earliest');
  t.throws(() => parseFilter({ from: '2026-02-30' }), { code: 'RELAY_ERR_BAD_REQUEST', field: 'from' }, 'through parseFilter too');
});

t.test('since: no further back than year 0', async (t) => {
  t.equal(parseSince('24h', now).toISOString(), '2026-02-28T00:00:00.000Z');
  const weeksAfterYear0 = YEAR_0_MS + 105_000 * 604_800_000; // a 'now' in 2012, a whole number of weeks after year 0
  t.equal(parseSince('105000w', weeksAfterYear0).getTime(), YEAR_0_MS, 'exactly year 0');
  t.throws(() => parseSince('105001w', weeksAfterYear0), { code: 'RELAY_ERR_BAD_REQUEST', field: 'since', message: /before year 0/ }, 'a week earlier');
  for (const value of ['20000000w', '999999999w', '999999999d']) {
    t.throws(() => parseFilter({ since: value }, now), { code: 'RELAY_ERR_BAD_REQUEST', field: 'since' }, value);
  }
  t.ok(Number.isFinite(parseFilter({ since: '999999999s' }, now).from?.getTime()), 'the longest duration in seconds is fine');
});

t.test('bucket: at most ten years', async (t) => {
  t.equal(parseBucket('1h'), 3600);
  t.equal(parseBucket('3650d'), MAX_BUCKET_SECONDS);
  t.throws(() => parseBucket('3651d'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'bucket', message: /at most 3650d/ });
  t.throws(() => parseBucket('999999999w'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'bucket' });
  t.throws(() => parseBucket('0h'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'bucket' });
});
