// What the API shows of an entity: metadata and spec, never secret material. Relay keys lose
// keyHash; host keys lose sealedValue and any write-only field, and say hasValue instead.
import { KINDS, type KindName } from '../catalog/kinds.ts';
import type { AnyEntity } from '../catalog/snapshot.ts';

export interface PublicEntity {
  metadata: AnyEntity['metadata'];
  spec: Record<string, unknown>;
}

export function toPublicEntity(kind: KindName, entity: AnyEntity): PublicEntity {
  const spec: Record<string, unknown> = { ...(entity.spec as Record<string, unknown>) };
  for (const field of KINDS[kind].writeOnlyFields) delete spec[field];
  if (kind === 'host-keys') spec.hasValue = typeof entity.sealedValue === 'string' && entity.sealedValue.length > 0;
  return { metadata: { ...entity.metadata }, spec };
}

/** Drops fields only the server sets (a caller's value is ignored). */
export function withoutServerFields(kind: KindName, spec: Record<string, unknown>): Record<string, unknown> {
  const out = { ...spec };
  for (const field of KINDS[kind].serverFields) delete out[field];
  return out;
}
