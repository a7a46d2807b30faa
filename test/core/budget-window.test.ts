// Budget windows: local midnight in the budget's zone, DST days of 23 and 25 hours, ISO weeks
// from Monday, months, and the rolling and lifetime windows that never reset.
import t from 'tap';
import { windowAt } from '../../core/budgets/window.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

t.test('daily in UTC and in a zone east and west of it', async (t) => {
  const w = windowAt({ window: 'daily', timezone: 'UTC' }, at('2026-11-26T09:30:00Z'));
  t.same([iso(w.startMs), iso(w.resetsAtMs)], ['2026-11-26T00:00:00.000Z', '2026-11-27T00:00:00.000Z']);
  const paris = windowAt({ window: 'daily', timezone: 'Europe/Paris' }, at('2026-11-26T23:30:00Z'));
  t.same([iso(paris.startMs), iso(paris.resetsAtMs)], ['2026-11-26T23:00:00.000Z', '2026-11-27T23:00:00.000Z'], '00:30 in Paris is the next local day');
  const ny = windowAt({ window: 'daily', timezone: 'America/New_York' }, at('2026-11-26T03:00:00Z'));
  t.same([iso(ny.startMs), iso(ny.resetsAtMs)], ['2026-11-25T05:00:00.000Z', '2026-11-26T05:00:00.000Z'], '22:00 the evening before in New York');
});

t.test('days around DST changes are 23 and 25 hours long', async (t) => {
  const spring = windowAt({ window: 'daily', timezone: 'Europe/Paris' }, at('2026-03-29T12:00:00Z'));
  t.equal((spring.resetsAtMs! - spring.startMs) / 3_600_000, 23);
  t.equal(iso(spring.startMs), '2026-03-28T23:00:00.000Z');
  const autumn = windowAt({ window: 'daily', timezone: 'Europe/Paris' }, at('2026-10-25T12:00:00Z'));
  t.equal((autumn.resetsAtMs! - autumn.startMs) / 3_600_000, 25);
});

t.test('weekly from Monday; monthly from the first', async (t) => {
  // 2026-11-26 is a Thursday.
  const week = windowAt({ window: 'weekly', timezone: 'UTC' }, at('2026-11-26T09:30:00Z'));
  t.same([iso(week.startMs), iso(week.resetsAtMs)], ['2026-11-23T00:00:00.000Z', '2026-11-30T00:00:00.000Z']);
  const sunday = windowAt({ window: 'weekly', timezone: 'UTC' }, at('2026-11-29T23:59:59Z'));
  t.equal(iso(sunday.startMs), '2026-11-23T00:00:00.000Z', 'Sunday is the last day of the week');
  const month = windowAt({ window: 'monthly', timezone: 'Asia/Tokyo' }, at('2026-12-31T16:00:00Z'));
  t.same([iso(month.startMs), iso(month.resetsAtMs)], ['2026-12-31T15:00:00.000Z', '2027-01-31T15:00:00.000Z'], '01:00 on January 1st in Tokyo');
});

t.test('rolling and lifetime windows have no reset', async (t) => {
  const now = at('2026-11-26T09:30:00Z');
  t.same(windowAt({ window: { rollingDays: 7 }, timezone: 'UTC' }, now), { startMs: now - 7 * 86_400_000, resetsAtMs: null });
  t.same(windowAt({ window: 'lifetime', timezone: 'UTC' }, now), { startMs: 0, resetsAtMs: null });
});
