// Zones whose clocks skip midnight when DST begins (Chile, Cuba: 00:00 becomes 01:00): the day
// begins at the jump. Two passes over the offset put that midnight an hour early, on the evening
// before, so for that hour every request found its daily window already reset: each started a new
// counter at 0 and a refusing budget admitted everything.
import t from 'tap';
import { BudgetGuard } from '../../core/budgets/budget-guard.ts';
import { windowAt } from '../../core/budgets/window.ts';
import { buildSnapshot, emptyTables } from '../../core/catalog/snapshot.ts';
import type { Principal } from '../../core/hooks.ts';
import { silentLog, usageEvent } from '../support/observer-fixtures.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

// Santiago, 2025-09-07: at 00:00 (-04, 04:00Z) the clocks jump to 01:00 (-03). Havana, 2024-03-10: the same at 05:00Z.
const GAPS = [
  { zone: 'America/Santiago', evening: '2025-09-07T03:30:00Z', dayStart: '2025-09-06T04:00:00.000Z', jump: '2025-09-07T04:00:00.000Z' },
  { zone: 'America/Havana', evening: '2024-03-10T04:30:00Z', dayStart: '2024-03-09T05:00:00.000Z', jump: '2024-03-10T05:00:00.000Z' },
];

for (const gap of GAPS) {
  t.test(`${gap.zone}: the day the clocks skip midnight begins at the jump`, async (t) => {
    const evening = windowAt({ window: 'daily', timezone: gap.zone }, at(gap.evening));
    t.same([iso(evening.startMs), iso(evening.resetsAtMs)], [gap.dayStart, gap.jump], '23:30 the evening before is in the day before, which ends at the jump');
    const after = windowAt({ window: 'daily', timezone: gap.zone }, at(gap.jump));
    t.equal(iso(after.startMs), gap.jump, 'the first instant of the new day starts it');
    t.equal((after.resetsAtMs! - after.startMs) / 3_600_000, 23, 'a 23-hour day');
  });
}

t.test('across the skipped midnight, every instant is in its window and windows meet end to end', async (t) => {
  for (const gap of GAPS) {
    for (const window of ['daily', 'weekly', 'monthly'] as const) {
      for (let ms = at(gap.jump) - 3 * 3_600_000; ms < at(gap.jump) + 3 * 3_600_000; ms += 60_000) {
        const w = windowAt({ window, timezone: gap.zone }, ms);
        if (!(w.startMs <= ms && ms < w.resetsAtMs!)) t.fail(`${gap.zone} ${window} at ${iso(ms)}: [${iso(w.startMs)}, ${iso(w.resetsAtMs)})`);
        if (windowAt({ window, timezone: gap.zone }, w.startMs - 1).resetsAtMs !== w.startMs) t.fail(`${gap.zone} ${window}: the window before ${iso(w.startMs)} does not end there`);
      }
    }
  }
  t.pass('checked minute by minute, three hours either side');
});

t.test('a refusing daily budget in Santiago keeps counting in the hour before the jump', async (t) => {
  const principal = { relayKey: { metadata: { id: 'key-1' } }, policy: { metadata: { id: 'policy-1' } } } as unknown as Principal;
  const budget = {
    metadata: { id: 'b1', slug: 'b1', displayName: 'B1', createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z' },
    spec: { scope: { relayKeyId: 'key-1' }, window: 'daily', timezone: 'America/Santiago', currency: 'USD', limitAmount: 1, action: 'refuse', enabled: true },
  };
  const tables = emptyTables();
  tables.budgets.set('b1', budget as never);
  const snapshot = buildSnapshot(tables);
  let now = at('2025-09-07T03:10:00Z'); // 23:10 on the 6th in Santiago
  const guard = new BudgetGuard({ snapshot: () => snapshot, now: () => now, log: silentLog, readSpend: async () => ({ micros: 0, tokens: 0 }) });
  await guard.firstReads(principal, ['model-1']);
  let admitted = 0;
  for (let i = 0; i < 5; i++) {
    if (guard.refusal(principal, 'model-1') !== null) break;
    admitted++;
    guard.record(usageEvent({ relay_key_id: 'key-1', cost: 0.4, started_at: new Date(now).toISOString() }));
    now += 60_000;
  }
  t.equal(admitted, 3, '$0.40 requests: the third passes $1, the fourth is refused');
  t.equal(guard.status(budget as never).spentAmount, 1.2);
  t.equal(guard.status(budget as never).resetsAt, '2025-09-07T04:00:00.000Z', 'it resets at the jump');
});
