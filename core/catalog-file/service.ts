// The catalog file as one service over the admin API's layer: used by the control routes
// (/api/catalog/*), by `relay catalog` against a stopped Relay's database, and by catalog.file at start.
import type { CatalogStore } from '../catalog/store.ts';
import { hostKeyWriter } from '../control/host-key-routes.ts';
import { providerWriter } from '../control/provider-writer.ts';
import type { HostKeyEnvironment } from '../crypto/host-key-env.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { applyCatalogDocument, type ApplyOptions, type ApplyOutcome } from './apply.ts';
import type { CatalogDocument } from './document.ts';
import { exportCatalogDocument } from './export.ts';

export interface CatalogFileDeps {
  store: CatalogStore;
  sealer: Sealer;
  hostKeyEnv: HostKeyEnvironment;
  /** The live adapter registry (a provider's adapter must be loaded). */
  adapters: ReadonlyMap<string, unknown>;
}

export class CatalogFileService {
  constructor(private readonly deps: CatalogFileDeps) {}

  export(): Promise<CatalogDocument> {
    return exportCatalogDocument(this.deps.store, this.deps.sealer);
  }

  apply(document: unknown, options: ApplyOptions = {}): Promise<ApplyOutcome> {
    const { store, sealer, hostKeyEnv, adapters } = this.deps;
    return applyCatalogDocument({
      store, sealer, writers: { providers: providerWriter(adapters), 'host-keys': hostKeyWriter(sealer, hostKeyEnv) },
    }, document, options);
  }
}
