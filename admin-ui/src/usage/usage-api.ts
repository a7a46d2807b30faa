// Calls for usage totals and time series.
import { api } from '../api/client.ts';
import type { GroupBy, UsageSummary, UsageTimeseries } from '../api/types.ts';

export const summary = (since: string, groupBy?: GroupBy) => api.get<UsageSummary>('/api/usage/summary', { since, groupBy });

/** `costCurrency`: each point's cost in that currency only (a window priced in several). */
export const timeseries = (since: string, bucket: string, groupBy?: GroupBy, costCurrency?: string) =>
  api.get<UsageTimeseries>('/api/usage/timeseries', { since, bucket, groupBy, costCurrency });
