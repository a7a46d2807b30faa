// The otel plugin's sampling ratio without the option comes from the SDK's standard variables, and
// a parentbased_ sampler named there does not make Relay trust a client's sampled flag.
import t from 'tap';
import { ROOT_CONTEXT, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { sampleRatioOf, samplerOf } from '../../plugins/otel/sampler.ts';

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
