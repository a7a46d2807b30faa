// The dashboard's Usage page: a window's cost reads in its currency, and a window priced in several
// currencies shows each amount rather than a sum of amounts that do not add.
import t from 'tap';
import { UNPRICED, windowCostText } from '../../admin-ui/src/logs/cost-text.ts';

const totals = (cost: number, tokens = 100) => ({ cost, input_tokens: tokens, output_tokens: 0 });

t.test('one currency: the amount in it', async (t) => {
  t.equal(windowCostText(totals(1.5), [{ currency: 'USD', cost: 1.5 }]), '$1.50');
  t.equal(windowCostText(totals(2), [{ currency: 'EUR', cost: 2 }]), '€2.00', 'a window priced in EUR only reads in EUR, not as dollars');
});

t.test('several currencies: each amount, never their sum', async (t) => {
  const text = windowCostText(totals(3.5), [{ currency: 'USD', cost: 3 }, { currency: 'EUR', cost: 0.5 }]);
  t.equal(text, '$3.00 · €0.50');
  t.notMatch(text, /3\.50/, 'no added total');
});

t.test('tokens without any priced request: unpriced, not $0.00', async (t) => {
  t.equal(windowCostText(totals(0), []), UNPRICED);
  t.equal(windowCostText(totals(0, 0), []), '$0.00', 'no traffic: nothing spent');
});
