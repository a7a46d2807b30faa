// Calls for usage totals and time series.
import { api } from '../api/client.ts';
import type { GroupBy, UsageSummary, UsageTimeseries } from '../api/types.ts';

export const summary = (since: string, groupBy?: GroupBy) => api.get<UsageSummary>('/api/usage/summary', { since, groupBy });

export const timeseries = (since: string, bucket: string, groupBy?: GroupBy) =>
  api.get<UsageTimeseries>('/api/usage/timeseries', { since, bucket, groupBy });
