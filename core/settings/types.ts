// Runtime settings kept in Postgres and switched without a restart (PUT /api/settings/...).

export interface UsageLoggingSetting {
  /** Id of the usage backend that receives events: file, postgres, clickhouse, valkey, ... */
  backend: string;
}

export interface PayloadLoggingSetting {
  /** Global master switch; nothing is captured while false. */
  enabled: boolean;
  /** Id of the payload backend: file, s3, clickhouse, ... */
  backend: string;
  /** Cap in bytes on each captured body. */
  maxBytes: number;
  /** Whether dashboard viewers may read captured bodies and headers (GET /api/logs/{id}); admins always may. */
  viewersReadPayloads: boolean;
}

export interface SettingsValues {
  'usage-logging': UsageLoggingSetting;
  'payload-logging': PayloadLoggingSetting;
}

export type SettingName = keyof SettingsValues;

export const DEFAULT_SETTINGS: SettingsValues = {
  'usage-logging': { backend: 'file' },
  'payload-logging': { enabled: false, backend: 'file', maxBytes: 1_048_576, viewersReadPayloads: false },
};

/** In-memory view of the settings, refreshed on NOTIFY. Reads never touch the database. */
export interface Settings {
  get<K extends SettingName>(name: K): SettingsValues[K];
  /** Called after a setting changed on any instance. */
  onChange(fn: (name: SettingName) => void): void;
}
