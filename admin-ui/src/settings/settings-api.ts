// Calls for runtime settings and operational actions.
import { api } from '../api/client.ts';
import type { PayloadLoggingSetting, UsageLoggingSetting } from '../api/types.ts';

export const getUsageLogging = () => api.get<UsageLoggingSetting>('/api/settings/usage-logging');
export const putUsageLogging = (s: UsageLoggingSetting) => api.put<UsageLoggingSetting>('/api/settings/usage-logging', s);
export const getPayloadLogging = () => api.get<PayloadLoggingSetting>('/api/settings/payload-logging');
export const putPayloadLogging = (s: PayloadLoggingSetting) => api.put<PayloadLoggingSetting>('/api/settings/payload-logging', s);
export const reloadSnapshot = () => api.post<unknown>('/api/reload');
export const generateMasterKey = () => api.post<{ masterKey: string }>('/api/master-key/generate');
