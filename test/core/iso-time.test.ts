// isoTime against Date#toISOString: random times in every era Date can write, sequences that
// move back and forth across second boundaries (the cached prefix must follow), and fractions.
import t from 'tap';
import fc from 'fast-check';
import { isoTime } from '../../core/pipeline/iso-time.ts';

const MAX_DATE_MS = 8.64e15;

t.test('writes exactly what toISOString writes, whatever the order of calls', async (t) => {
  const near = fc.integer({ min: 1_700_000_000_000, max: 1_700_000_005_000 });
  const anywhere = fc.integer({ min: -MAX_DATE_MS, max: MAX_DATE_MS });
  const time = fc.oneof(near, anywhere, fc.double({ min: -4e12, max: 4e12, noNaN: true }));
  t.doesNotThrow(() => fc.assert(fc.property(fc.array(time, { minLength: 1, maxLength: 50 }), (times) =>
    times.every((ms) => isoTime(ms) === new Date(ms).toISOString())), { seed: 20261121, numRuns: 500 }), '500 random sequences');
});

t.test('milliseconds are padded and the second rolls over', async (t) => {
  const base = Date.UTC(2026, 10, 21, 11, 5, 7);
  t.equal(isoTime(base), '2026-11-21T11:05:07.000Z');
  t.equal(isoTime(base + 9), '2026-11-21T11:05:07.009Z');
  t.equal(isoTime(base + 42), '2026-11-21T11:05:07.042Z');
  t.equal(isoTime(base + 999.9), '2026-11-21T11:05:07.999Z');
  t.equal(isoTime(base + 1000), '2026-11-21T11:05:08.000Z');
  t.equal(isoTime(base - 1), '2026-11-21T11:05:06.999Z');
  t.equal(isoTime(-1), '1969-12-31T23:59:59.999Z');
  t.equal(isoTime(Date.UTC(10000, 0, 1)), '+010000-01-01T00:00:00.000Z');
  t.equal(isoTime(base + 5), '2026-11-21T11:05:07.005Z', 'back in the cached era after an uncached one');
});
