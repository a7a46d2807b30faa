// Calls for the request log.
import { api } from '../api/client.ts';
import type { LogDetail, Page, UsageEvent } from '../api/types.ts';

export interface LogFilters {
  relayKeyId?: string;
  policyId?: string;
  modelId?: string;
  status?: string;
  since?: string;
  from?: string;
  to?: string;
}

export const FILTER_KEYS: Array<keyof LogFilters> = ['relayKeyId', 'policyId', 'modelId', 'status', 'since', 'from', 'to'];

export function listLogs(filters: LogFilters, cursor: string | null, limit = 50): Promise<Page<UsageEvent>> {
  return api.get<Page<UsageEvent>>('/api/logs', { ...filters, cursor, limit });
}

export const getLog = (requestId: string) => api.get<LogDetail>(`/api/logs/${encodeURIComponent(requestId)}`);
