// A binding's recent times to first byte (core/pipeline/ttfb-ring.ts, binding-meter.ts): a bounded
// ring, its nearest-rank p95, and no p95 below P95_MIN_SAMPLES observations.
import t from 'tap';
import { TTFB_SAMPLES, TtfbRing } from '../../core/pipeline/ttfb-ring.ts';
import { BindingMeter, P95_MIN_SAMPLES } from '../../core/pipeline/binding-meter.ts';

t.test('p95 of 1..100 is 95; the ring keeps only the last TTFB_SAMPLES', async (t) => {
  const ring = new TtfbRing();
  t.ok(Number.isNaN(ring.p95()), 'no observations: no p95');
  for (let ms = 1; ms <= 100; ms++) ring.add(ms);
  t.equal(ring.p95(), 95);
  // As many slow observations as the ring holds push every fast one out.
  for (let i = 0; i < TTFB_SAMPLES; i++) ring.add(1000 + i);
  t.equal(ring.size, TTFB_SAMPLES);
  t.ok(ring.p95() >= 1000, `old observations are gone (${ring.p95()})`);
});

t.test('the meter gives a p95 only from P95_MIN_SAMPLES observations of that binding', async (t) => {
  const meter = new BindingMeter();
  for (let i = 0; i < P95_MIN_SAMPLES - 2; i++) meter.observe('a', 50);
  meter.observe('a', 400);
  t.equal(meter.p95Of('a'), null, `${P95_MIN_SAMPLES - 1} observations: none`);
  meter.observe('a', 400);
  t.equal(meter.p95Of('a'), 400, 'two slow answers in 20: the 19th of 20 sorted is slow');
  for (let i = 0; i < 20; i++) meter.observe('a', 50);
  t.equal(meter.p95Of('a'), 50, 'two slow in 40: the 38th of 40 sorted is fast');
  t.equal(meter.p95Of('b'), null, 'per binding');
  meter.close();
});
