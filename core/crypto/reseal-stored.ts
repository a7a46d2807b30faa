// Start-up sealing of values a catalog kind stores sealed (host header values, budget webhook
// URLs): plaintext ones are sealed, and those under RELAY_MASTER_KEY_PREVIOUS re-sealed (a
// rotation), in one transaction; without a master key the rows holding plaintext are only counted.
import type { Database } from '../db/types.ts';
import { isSealedForm } from '../catalog/kinds.ts';
import { Sealer } from './sealing.ts';

export interface ResealResult {
  /** Rows whose values were sealed (plaintext) or re-sealed (under the previous key) now. */
  sealed: number;
  /** Rows with a plaintext value left as it is (no master key). */
  plaintext: number;
  /** Rows with a value sealed under a key that is neither current nor previous. */
  unknownKey: number;
}

/** Where a kind keeps its sealed values: the rows to lock, and a row's values as a list it can be rebuilt from. */
export interface StoredSealedValues<Spec> {
  /** SELECT id, spec ... FOR UPDATE: the rows that may hold such values. */
  select: string;
  /** The spec member that holds them, written back whole. */
  member: string;
  values(spec: Spec): string[];
  /** The member with `values` in place of the old ones, in the same order. */
  rebuild(spec: Spec, values: string[]): unknown;
}

export async function resealStored<Spec>(db: Database, sealer: Sealer, stored: StoredSealedValues<Spec>): Promise<ResealResult> {
  return db.transaction(async (tx) => {
    const res = await tx.query<{ id: string; spec: Spec }>(stored.select);
    const result: ResealResult = { sealed: 0, plaintext: 0, unknownKey: 0 };
    for (const row of res.rows) {
      const values = stored.values(row.spec);
      const keyIds = values.map((value) => (isSealedForm(value) ? Sealer.keyIdOf(value) : null));
      if (keyIds.some((id) => id !== null && id !== sealer.currentKeyId && id !== sealer.previousKeyId)) result.unknownKey++;
      // Plaintext, or sealed under the key a rotation retires.
      const stale = (id: string | null) => id === null || (sealer.previousKeyId !== null && id === sealer.previousKeyId);
      if (!keyIds.some(stale)) continue;
      if (!sealer.enabled) {
        result.plaintext++;
        continue;
      }
      const resealed = values.map((value, i) => {
        const id = keyIds[i] ?? null;
        if (!stale(id)) return value;
        return sealer.seal(id === null ? value : sealer.open(value));
      });
      await tx.query(
        `UPDATE catalog_entities SET spec = jsonb_set(spec, '{${stored.member}}', $2::jsonb), updated_at = now(), revision = nextval('catalog_revision') WHERE id = $1`,
        [row.id, JSON.stringify(stored.rebuild(row.spec, resealed))]);
      result.sealed++;
    }
    return result;
  });
}
