// The settings an instance uses while none is stored in the database: the config file's
// selected usage and payload backends over the built-in defaults. A stored setting (PUT
// /api/settings/...) still wins, so the endpoints keep switching backends at runtime.
import type { RelayConfig } from '../config/schema.ts';
import { DEFAULT_SETTINGS, type SettingsValues } from './types.ts';

export function initialSettings(config: Pick<RelayConfig, 'usageLogging' | 'payloadLogging'>): SettingsValues {
  return {
    'usage-logging': { ...DEFAULT_SETTINGS['usage-logging'], backend: config.usageLogging.backend },
    'payload-logging': { ...DEFAULT_SETTINGS['payload-logging'], backend: config.payloadLogging.backend },
  };
}
