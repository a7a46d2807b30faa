// The otel plugin's sampling ratio without the option comes from the SDK's standard variables, and
// a parentbased_ sampler named there does not make Relay trust a client's sampled flag, nor can a
// client choose trace ids that the ratio always samples.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { KeyedTraceIdRatioSampler, sampleRatioOf, samplerOf } from '../../plugins/otel/sampler.ts';

t.test('the ratio: the option, else OTEL_TRACES_SAMPLER(_ARG) as the SDK reads them, else 1', async (t) => {
  t.equal(sampleRatioOf(0.25, { OTEL_TRACES_SAMPLER: 'always_off' }), 0.25, 'the option wins');
  t.equal(sampleRatioOf(undefined, {}), 1, 'nothing set: every request');
  t.equal(sampleRatioOf(undefined, { OTEL_TRACES_SAMPLER: 'parentbased_always_off' }), 0);
  t.equal(sampleRatioOf(undefined, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }), 0.1);
  t.equal(sampleRatioOf(undefined, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }), 1, 'out of range: 1');
  t.equal(sampleRatioOf(undefined, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' }), 1, 'no argument: 1');
  t.throws(() => sampleRatioOf(undefined, { OTEL_TRACES_SAMPLER: 'jaeger_remote' }), /OTEL_TRACES_SAMPLER "jaeger_remote" is not supported/);
});

t.test('a remote parent\'s sampled flag decides only when trusted', async (t) => {
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const remote = (flags: TraceFlags) => trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: 'b7ad6b7169203331', traceFlags: flags, isRemote: true });
  const decide = (ratio: number, trusted: boolean, flags: TraceFlags) => samplerOf(ratio, trusted).shouldSample(remote(flags), traceId, 'chat m', SpanKind.SERVER, {}, []).decision;
  t.equal(decide(0, false, TraceFlags.SAMPLED), SamplingDecision.NOT_RECORD, 'ratio 0: a sampled parent is not followed');
  t.equal(decide(1, false, TraceFlags.NONE), SamplingDecision.RECORD_AND_SAMPLED, 'ratio 1: a not-sampled parent does not hide the request');
  t.equal(decide(0, true, TraceFlags.SAMPLED), SamplingDecision.RECORD_AND_SAMPLED, 'trusted: the client\'s flag');
  t.equal(decide(1, true, TraceFlags.NONE), SamplingDecision.NOT_RECORD, 'trusted: the client\'s flag');
});

t.test('a client cannot choose trace ids that are always sampled', async (t) => {
  // The standard ratio sampler XORs the id's 32-bit words and samples at or under ratio * 2^32:
  // ids whose words XOR to 0 pass it at any ratio above 0.
  const chosen = Array.from({ length: 200 }, () => {
    const words = [0, 1, 2].map(() => randomBytes(4).readUInt32BE(0));
    const last = (words[0]! ^ words[1]! ^ words[2]!) >>> 0;
    return [...words, last].map((w) => w.toString(16).padStart(8, '0')).join('');
  });
  const ratio = 0.01;
  const standard = new TraceIdRatioBasedSampler(ratio);
  t.equal(chosen.filter((id) => standard.shouldSample(ROOT_CONTEXT, id).decision === SamplingDecision.RECORD_AND_SAMPLED).length, 200, 'the standard sampler takes every chosen id');

  const sampled = (id: string) => {
    const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId: id, spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true });
    return samplerOf(ratio, false).shouldSample(parent, id, 'chat m', SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;
  };
  // At 1%, 200 ids give 2 on average; 20 or more would happen about once in 10^15 runs.
  t.ok(chosen.filter(sampled).length < 20, 'Relay samples them at about its ratio');

  const keyed = new KeyedTraceIdRatioSampler(0.5);
  const random = Array.from({ length: 2000 }, () => randomBytes(16).toString('hex'));
  const share = random.filter((id) => keyed.shouldSample(ROOT_CONTEXT, id).decision === SamplingDecision.RECORD_AND_SAMPLED).length / random.length;
  t.ok(share > 0.4 && share < 0.6, `a ratio of 0.5 samples about half (${share})`);
  t.equal(new KeyedTraceIdRatioSampler(1).shouldSample(ROOT_CONTEXT, random[0]!).decision, SamplingDecision.RECORD_AND_SAMPLED);
  t.equal(new KeyedTraceIdRatioSampler(0).shouldSample(ROOT_CONTEXT, random[0]!).decision, SamplingDecision.NOT_RECORD);
});
