// The order of a model's bindings by spec.balancing (core/pipeline/balancing.ts) from a real
// BindingMeter: weighted leaves the order alone; least-in-flight and lowest-latency score each
// binding, weights as a prior; an unmeasured or stale binding goes first so it gets measured.
import t from 'tap';
import { BindingMeter, LATENCY_STALE_MS } from '../../core/pipeline/binding-meter.ts';
import { orderByStrategy } from '../../core/pipeline/balancing.ts';

interface B { key: string; weight: number }
const order = (strategy: 'weighted' | 'least-in-flight' | 'lowest-latency', items: B[], meter: BindingMeter) =>
  orderByStrategy(strategy, items, meter, (b) => b.key, (b) => b.weight).map((b) => b.key);

t.test('weighted keeps the weighted random order', async (t) => {
  const meter = new BindingMeter();
  meter.observe('a', 500);
  meter.observe('b', 10);
  t.same(order('weighted', [{ key: 'a', weight: 1 }, { key: 'b', weight: 1 }], meter), ['a', 'b']);
});

t.test('least-in-flight: fewest in flight first, weights as a prior, ties keep the order', async (t) => {
  const meter = new BindingMeter();
  const endA = meter.acquire('a');
  t.same(order('least-in-flight', [{ key: 'a', weight: 1 }, { key: 'b', weight: 1 }], meter), ['b', 'a']);
  endA();
  endA();
  t.equal(meter.inFlightOf('a'), 0, 'ending twice counts once');
  t.same(order('least-in-flight', [{ key: 'a', weight: 1 }, { key: 'b', weight: 1 }], meter), ['a', 'b']);
  // b has 1 in flight at weight 4, a has 0 at weight 1: (1+1)/1 vs (0+1)/0.25.
  meter.acquire('b');
  t.same(order('least-in-flight', [{ key: 'a', weight: 1 }, { key: 'b', weight: 4 }], meter), ['b', 'a'], 'the heavier binding takes more in flight');
});

t.test('lowest-latency: the EWMA orders, unmeasured and stale bindings are tried first', async (t) => {
  const meter = new BindingMeter();
  const now = Date.now();
  meter.observe('slow', 400, now);
  meter.observe('fast', 100, now);
  t.same(order('lowest-latency', [{ key: 'slow', weight: 1 }, { key: 'fast', weight: 1 }], meter), ['fast', 'slow']);
  t.same(order('lowest-latency', [{ key: 'slow', weight: 1 }, { key: 'fast', weight: 1 }, { key: 'new', weight: 1 }], meter), ['new', 'fast', 'slow']);
  // The fast one slows down: the average follows (alpha 0.3), and within a few answers it is passed.
  for (let i = 0; i < 5; i++) meter.observe('fast', 1000, now);
  t.ok(meter.latencyOf('fast', now)! > 400, `the average rose (${meter.latencyOf('fast', now)})`);
  t.same(order('lowest-latency', [{ key: 'slow', weight: 1 }, { key: 'fast', weight: 1 }], meter), ['slow', 'fast']);
  t.equal(meter.latencyOf('slow', now + LATENCY_STALE_MS + 1), null, 'an old average counts as unmeasured');
  // Weights as a prior: 300 ms at weight 4 beats 100 ms at weight 1 (300/1 vs 100/0.25).
  const prior = new BindingMeter();
  prior.observe('heavy', 300);
  prior.observe('light', 100);
  t.same(order('lowest-latency', [{ key: 'light', weight: 1 }, { key: 'heavy', weight: 4 }], prior), ['heavy', 'light']);
});
