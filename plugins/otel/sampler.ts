// Which requests the otel plugin traces: the operator's trace-id ratio, also for a request whose
// client sent a traceparent (its sampled flag is the client's word, not the operator's), unless the
// operator trusts the inbound trace context (Relay behind a proxy that sets or strips it).
import { createHmac, randomBytes } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import { ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace-base';

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
 * The ratio on a trace id the client chose, keyed by a secret of this process: the standard ratio
 * sampler reads the id's bits as they are, so a client could pick ids it always samples.
 */
export class KeyedTraceIdRatioSampler implements Sampler {
  private readonly key = randomBytes(32);
  private readonly bound: number;

  constructor(private readonly ratio: number) {
    this.bound = Math.floor(ratio * 0x1_0000_0000);
  }

  shouldSample(_context: Context, traceId: string): SamplingResult {
    const sampled = this.ratio >= 1 || (this.ratio > 0 && createHmac('sha256', this.key).update(traceId).digest().readUInt32BE(0) < this.bound);
    return { decision: sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
  }

  toString(): string {
    return `KeyedTraceIdRatioSampler{${this.ratio}}`;
  }
}

/**
 * A request without a remote parent is sampled by the ratio on its trace id (Relay made the id),
 * and by default one with a remote parent by the ratio on its id keyed by a secret (the trace id
 * is kept, so the trace still joins); with `trustInbound`, the client's sampled flag decides.
 * Relay's own child spans follow their parent.
 */
export function samplerOf(ratio: number, trustInbound: boolean): Sampler {
  const byTraceId = new TraceIdRatioBasedSampler(ratio);
  if (trustInbound) return new ParentBasedSampler({ root: byTraceId });
  const byKeyedTraceId = new KeyedTraceIdRatioSampler(ratio);
  return new ParentBasedSampler({ root: byTraceId, remoteParentSampled: byKeyedTraceId, remoteParentNotSampled: byKeyedTraceId });
}
