// ScrapeTimeHistogram against prom-client's own Histogram: the same observations, including
// values on a bound, past the last bound, negative and not finite, must give the same exposition
// text, and reset() empties it.
import t from 'tap';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { ScrapeTimeHistogram } from '../../core/server/scrape-time-histogram.ts';

const BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5];
const help = 'Request duration';

async function both(observations: Array<[string, number]>): Promise<[string, string]> {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new ScrapeTimeHistogram({ name: 'duration_seconds', help, labelName: 'shape', buckets: BUCKETS, registry: ours });
  const reference = new Histogram({ name: 'duration_seconds', help, labelNames: ['shape'], buckets: BUCKETS, registers: [theirs] });
  for (const [shape, value] of observations) {
    histogram.observe(shape, value);
    if (Number.isFinite(value)) reference.observe({ shape }, value);
  }
  return [await ours.metrics(), await theirs.metrics()];
}

t.test('writes the same text as prom-client for the same observations', async (t) => {
  const value = fc.oneof(
    fc.double({ min: -1, max: 20, noNaN: true }),
    fc.constantFrom(...BUCKETS, 0, Number.POSITIVE_INFINITY, Number.NaN),
  );
  const observation = fc.tuple(fc.constantFrom('openai.chat', 'anthropic.messages', 'openai.responses'), value);
  await fc.assert(fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
    const [ours, theirs] = await both(observations);
    return ours === theirs;
  }), { seed: 20261121, numRuns: 300 });
  const [ours] = await both([['openai.chat', 0.007], ['openai.chat', 3]]);
  t.match(ours, /^duration_seconds_bucket\{le="0\.01",shape="openai\.chat"\} 1$/m);
  t.match(ours, /^duration_seconds_bucket\{le="\+Inf",shape="openai\.chat"\} 2$/m);
  t.match(ours, /^duration_seconds_count\{shape="openai\.chat"\} 2$/m);
});

t.test('reset empties every series', async (t) => {
  const registry = new Registry();
  const histogram = new ScrapeTimeHistogram({ name: 'd', help, labelName: 'shape', buckets: BUCKETS, registry });
  histogram.observe('openai.chat', 0.2);
  t.match(await registry.metrics(), /d_count\{shape="openai.chat"\} 1/);
  registry.resetMetrics();
  t.notMatch(await registry.metrics(), /d_count/);
});
