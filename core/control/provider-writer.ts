// Providers: spec.adapter must name a vendor adapter loaded on this instance, as the settings
// endpoints refuse backends that are not loaded; otherwise every request routed to it fails.
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import type { SpecToStore, SpecWriter } from './catalog-routes.ts';

function requireLoadedAdapter(adapter: unknown, loaded: ReadonlyMap<string, unknown>): void {
  if (typeof adapter !== 'string' || loaded.has(adapter)) return;
  const ids = [...loaded.keys()].sort();
  const choices = ids.length > 0 ? `loaded adapters: ${ids.join(', ')}` : 'no vendor adapter is loaded';
  throw new RelayError(
    'RELAY_ERR_ADAPTER_NOT_LOADED',
    `/spec/adapter: no loaded plugin provides the adapter ${JSON.stringify(echoedName(adapter))} (add its plugin to the config); ${choices}`,
    { field: '/spec/adapter' },
  );
}

/** `adapters` is the live registry: plugins loaded after the routes were registered count too. */
export function providerWriter(adapters: ReadonlyMap<string, unknown>): SpecWriter {
  return {
    forCreate(input): SpecToStore {
      requireLoadedAdapter(input.adapter, adapters);
      return { spec: input };
    },
    forUpdate(_current, patch): SpecToStore {
      // Only a changed adapter is checked: renaming a provider whose plugin is gone stays possible.
      requireLoadedAdapter(patch.adapter, adapters);
      return { spec: patch };
    },
  };
}
