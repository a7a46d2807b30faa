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

t.test('a cost below a cent keeps two significant digits, never $0.0000', async (t) => {
  const { formatCost } = await import('../../admin-ui/src/format.ts');
  t.equal(formatCost(0.0000123), '$0.000012');
  t.equal(formatCost(0.00042), '$0.00042');
  t.equal(formatCost(0.5), '$0.50');
  t.equal(formatCost(12.345), '$12.35');
  t.equal(formatCost(0), '$0.00');
  t.equal(formatCost(0.000042, 'EUR'), '€0.000042');
});

t.test('usage totals: tokens that add up to no cost are unpriced, as in the logs', async (t) => {
  const { totalCostText } = await import('../../admin-ui/src/logs/cost-text.ts');
  t.equal(totalCostText({ cost: 0, input_tokens: 21, output_tokens: 7 }), 'unpriced');
  t.equal(totalCostText({ cost: 0, input_tokens: 0, output_tokens: 0 }), '$0.00', 'no tokens, no gap');
  t.equal(totalCostText({ cost: 0.0000315, input_tokens: 21, output_tokens: 7 }), '$0.000032');
});

t.test('the logs CSV: quoted where needed, formulas defused, names beside ids', async (t) => {
  const { csvField, logsCsv } = await import('../../admin-ui/src/logs/logs-csv.ts');
  t.equal(csvField('plain'), 'plain');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
  t.equal(csvField(-3), '-3', 'a negative number is a number');
  t.equal(csvField(null), '');
  const event = {
    request_id: 'req-1', started_at: '2026-11-26T12:00:00.000Z', status: 429, error_code: 'RELAY_ERR_RATE_LIMITED', model_slug: null, model_requested: 'gpt-x',
    relay_key_id: 'k1', relay_key_prefix: 'rk_ab', client: 'codex', stream: false, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0,
    reasoning_tokens: 0, cost: null, currency: null, latency_ms: 12, ttfb_ms: null,
  } as never;
  const csv = logsCsv([event], (id) => (id === 'k1' ? 'Team, CI' : '?')).split('\r\n');
  t.equal(csv[1], '2026-11-26T12:00:00.000Z,req-1,429,RELAY_ERR_RATE_LIMITED,gpt-x,"Team, CI",rk_ab,codex,false,0,0,0,0,,,12,');
});
