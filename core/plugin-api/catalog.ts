// relay-gateway/catalog: the catalog's entities as plugins read them (RelayContext.snapshot()), prices, and
// the runtime settings.
export type * from '../catalog/kinds.ts';
export type { CatalogSnapshot } from '../catalog/snapshot.ts';
export type { Settings, SettingsValues, UsageLoggingSetting, PayloadLoggingSetting } from '../settings/types.ts';
// A request's price: a pricings entity, else the shipped table (core/pricing/).
export { priceFor, tableEntryFor, type Price } from '../pricing/price-lookup.ts';
