// The logs' cost column: a request that used tokens and has no cost says "unpriced" (its model has
// no pricing and is not in the shipped table), never a dash that reads as free or as no usage.
import t from 'tap';
import { costText, isUnpriced } from '../../admin-ui/src/logs/cost-text.ts';

t.test('tokens without a cost are unpriced; a priced request shows its cost', async (t) => {
  t.equal(costText({ cost: null, currency: null, input_tokens: 21, output_tokens: 7 }), 'unpriced');
  t.ok(isUnpriced({ cost: null, currency: null, input_tokens: 0, output_tokens: 3 }));
  t.equal(costText({ cost: 0.004275, currency: 'USD', input_tokens: 3_600, output_tokens: 50 }), '$0.0043');
  t.equal(costText({ cost: 0, currency: 'USD', input_tokens: 5, output_tokens: 0 }), '$0.00', 'a zero cost is a price, not a gap');
});

t.test('a request without tokens (refused, failed) has no cost to show', async (t) => {
  t.equal(costText({ cost: null, currency: null, input_tokens: 0, output_tokens: 0 }), '—');
  t.notOk(isUnpriced({ cost: null, currency: null, input_tokens: 0, output_tokens: 0 }));
});
