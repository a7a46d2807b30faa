// The dashboard's Sessions pages: how a session's duration, cache hit ratio, models and cost read.
// (The pages themselves are in test/e2e/dashboard.test.ts; their API types are pinned to core's
// by test/support/admin-ui-api-types.ts.)
import t from 'tap';
import { formatDuration, formatRatio, modelsLine, pricedInSeveralCurrencies, sessionCost } from '../../admin-ui/src/sessions/session-format.ts';

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

t.test('cost in the session\'s currency; a sum over several currencies names them instead of an amount', async (t) => {
  const totals = { cost: 1.5 } as never;
  t.equal(sessionCost({ currencies: ['EUR'], totals }), '€1.50');
  t.equal(sessionCost({ currencies: [], totals: { cost: 0 } as never }), '$0.00', 'unpriced: nothing spent');
  t.equal(sessionCost({ currencies: ['EUR', 'USD'], totals }), 'mixed (EUR, USD)', 'without the split (an in-house backend): the currencies named');
  t.equal(sessionCost({ currencies: ['EUR', 'USD'], totals, costs: [{ currency: 'USD', cost: 1.25 }, { currency: 'EUR', cost: 0.25 }] }), '$1.25 · €0.25', 'with it: each amount');
  t.equal(pricedInSeveralCurrencies([{ currencies: ['USD'] }, { currencies: [] }, { currencies: ['USD'] }]), false);
  t.equal(pricedInSeveralCurrencies([{ currencies: ['USD'] }, { currencies: ['JPY'] }]), true, 'the page then says the order is by tokens');
});
