// Master-key rotation: re-seals every stored host-key value that names the previous master key
// (RELAY_MASTER_KEY_PREVIOUS) under the current one (RELAY_MASTER_KEY), in one transaction.
// Each UPDATE fires the catalog's NOTIFY, so every running instance picks up the new ciphertext;
// once this has run, the previous key is no longer needed. Values are never logged, only counts.
import type { Logger } from 'pino';
import type { Database } from '../db/types.ts';
import { Sealer } from './sealing.ts';
import { configValuesSealedUnder } from './config-sealed.ts';

export interface RekeyResult {
  /** Values re-sealed under the current key. */
  resealed: number;
  /** Values already under the current key. */
  current: number;
  /** Values under a master key that is neither current nor previous (left as they are). */
  unknownKey: number;
}

interface SealedRow {
  id: string;
  slug: string;
  sealed_value: string;
}

/** Re-seals host-key values under the previous master key with the current one. */
export async function resealHostKeys(db: Database, sealer: Sealer): Promise<RekeyResult> {
  const currentId = sealer.currentKeyId;
  const previousId = sealer.previousKeyId;
  if (!currentId) throw new Error('re-sealing host keys needs RELAY_MASTER_KEY (the new key)');
  return db.transaction(async (tx) => {
    // FOR UPDATE: two instances starting together re-seal each value once; the second sees the
    // first one's rows already under the current key.
    const res = await tx.query<SealedRow>(
      "SELECT id, slug, sealed_value FROM catalog_entities WHERE kind = 'host-keys' AND sealed_value IS NOT NULL ORDER BY id FOR UPDATE");
    const result: RekeyResult = { resealed: 0, current: 0, unknownKey: 0 };
    for (const row of res.rows) {
      const keyId = Sealer.keyIdOf(row.sealed_value);
      if (keyId === currentId) {
        result.current++;
        continue;
      }
      if (keyId === null || keyId !== previousId) {
        result.unknownKey++;
        continue;
      }
      const resealed = sealer.seal(sealer.open(row.sealed_value));
      await tx.query(
        "UPDATE catalog_entities SET sealed_value = $2, updated_at = now(), revision = nextval('catalog_revision') WHERE id = $1",
        [row.id, resealed]);
      result.resealed++;
    }
    return result;
  });
}

/** At start-up with RELAY_MASTER_KEY_PREVIOUS set: re-seal, and log the counts. */
export async function resealAtStartup(db: Database, sealer: Sealer, log: Logger): Promise<RekeyResult | null> {
  if (!sealer.previousKeyId) return null;
  if (!sealer.enabled) {
    log.warn('RELAY_MASTER_KEY_PREVIOUS is set but RELAY_MASTER_KEY is not: host-key values are not re-encrypted');
    return null;
  }
  const result = await resealHostKeys(db, sealer);
  log.info({ ...result, currentKeyId: sealer.currentKeyId, previousKeyId: sealer.previousKeyId },
    `master-key rotation: re-encrypted ${result.resealed} host-key value(s) under the current key`);
  if (result.unknownKey > 0) {
    log.warn({ unknownKey: result.unknownKey }, 'some host-key values are sealed under a master key that is neither current nor previous; they cannot be opened');
  }
  return result;
}

/** During a rotation: names (never shows) the config file's values still sealed under the previous key. */
export function warnConfigSealedUnderPrevious(config: unknown, sealer: Sealer, log: Logger): void {
  if (!sealer.previousKeyId || !sealer.enabled) return;
  const pointers = configValuesSealedUnder(config, sealer.previousKeyId);
  if (pointers.length === 0) return;
  log.warn({ pointers }, 'config values are sealed under RELAY_MASTER_KEY_PREVIOUS and cannot be re-sealed in place: re-seal each with relay master-key seal before removing the previous key');
}
