// relay-gateway/catalog: the catalog's entities as plugins read them (RelayContext.snapshot()), and
// the runtime settings.
export type * from '../catalog/kinds.ts';
export type { CatalogSnapshot } from '../catalog/snapshot.ts';
export type { Settings, SettingsValues, UsageLoggingSetting, PayloadLoggingSetting } from '../settings/types.ts';
