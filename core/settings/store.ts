// Settings in Postgres with an in-memory copy per instance, refreshed on NOTIFY, so reads on
// the hot path never query and a change reaches every instance without a restart.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';
import { DEFAULT_SETTINGS, type SettingName, type Settings, type SettingsValues } from './types.ts';

export class SettingsStore implements Settings {
  private values: SettingsValues = structuredClone(DEFAULT_SETTINGS);
  private readonly listeners: Array<(name: SettingName) => void> = [];

  constructor(private readonly db: Database, private readonly log: Logger) {}

  async start(): Promise<void> {
    await this.db.listen('relay_settings', (name) => void this.reload(name as SettingName), () => void this.reloadAll());
    await this.reloadAll();
  }

  /** All values, for the local snapshot (core/catalog/local-snapshot.ts). */
  current(): SettingsValues {
    return this.values;
  }

  /** Serves saved values until the database can be read (a start during an outage). */
  restore(saved: Partial<SettingsValues>): void {
    for (const name of Object.keys(saved) as SettingName[]) if (name in DEFAULT_SETTINGS) this.apply(name, saved[name] as SettingsValues[SettingName]);
  }

  get<K extends SettingName>(name: K): SettingsValues[K] {
    return this.values[name];
  }

  onChange(fn: (name: SettingName) => void): void {
    this.listeners.push(fn);
  }

  /** Stores a setting; every instance (this one included) picks it up through NOTIFY. */
  async set<K extends SettingName>(name: K, value: SettingsValues[K]): Promise<void> {
    await this.db.query(
      `INSERT INTO settings (name, value, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [name, JSON.stringify(value)]);
    this.apply(name, value);
  }

  private async reloadAll(): Promise<void> {
    try {
      const res = await this.db.query<{ name: string; value: unknown }>('SELECT name, value FROM settings');
      for (const row of res.rows) if (row.name in DEFAULT_SETTINGS) this.apply(row.name as SettingName, row.value as SettingsValues[SettingName]);
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not load settings; keeping the last known values');
    }
  }

  private async reload(name: SettingName): Promise<void> {
    if (!(name in DEFAULT_SETTINGS)) return;
    try {
      const res = await this.db.query<{ value: unknown }>('SELECT value FROM settings WHERE name = $1', [name]);
      if (res.rows[0]) this.apply(name, res.rows[0].value as SettingsValues[SettingName]);
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err), name }, 'could not reload a setting');
    }
  }

  private apply<K extends SettingName>(name: K, value: SettingsValues[K]): void {
    const merged = { ...DEFAULT_SETTINGS[name], ...value };
    if (JSON.stringify(merged) === JSON.stringify(this.values[name])) return;
    this.values = { ...this.values, [name]: merged };
    for (const fn of this.listeners) {
      try {
        fn(name);
      } catch (err) {
        this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'settings listener failed');
      }
    }
  }
}
