// Which requests the otel plugin traces: the operator's trace-id ratio, also for a request whose
// client sent a traceparent (its sampled flag is the client's word, not the operator's), unless the
// operator trusts the inbound trace context (Relay behind a proxy that sets or strips it).
import { ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';

/** The ratio each OTEL_TRACES_SAMPLER value stands for; a parentbased_ one does not make Relay trust the client. */
const RATIO_OF_SAMPLER: Record<string, number | 'arg'> = {
  always_on: 1, parentbased_always_on: 1, always_off: 0, parentbased_always_off: 0, traceidratio: 'arg', parentbased_traceidratio: 'arg',
};

/** The share of requests traced: the option, else OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (as the SDK reads them), else every one. */
export function sampleRatioOf(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  if (option !== undefined) return option;
  const name = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  const ratio = RATIO_OF_SAMPLER[name];
  if (ratio === undefined) throw new Error(`OTEL_TRACES_SAMPLER "${name}" is not supported: use always_on, always_off, traceidratio or their parentbased_ forms`);
  if (ratio !== 'arg') return ratio;
  // The SDK's reading: a blank or out-of-range argument is 1.
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG?.trim() || NaN);
  return Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
}

/**
 * A request without a remote parent, and by default one with, is sampled by the ratio on its trace
 * id (the trace id is kept, so the trace still joins); with `trustInbound`, the client's sampled
 * flag decides. Relay's own child spans follow their parent.
 */
export function samplerOf(ratio: number, trustInbound: boolean): Sampler {
  const byTraceId = new TraceIdRatioBasedSampler(ratio);
  if (trustInbound) return new ParentBasedSampler({ root: byTraceId });
  return new ParentBasedSampler({ root: byTraceId, remoteParentSampled: byTraceId, remoteParentNotSampled: byTraceId });
}
