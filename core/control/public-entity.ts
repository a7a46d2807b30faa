// What the API shows of an entity: metadata and spec, never secret material. Relay keys lose
// keyHash; host keys lose sealedValue and any write-only field, and say hasValue instead. A budget's
// webhook URLs (Slack's hold their secret in the path; stored sealed with a master key) are shown
// whole only to an admin, by origin to a viewer.
import type { FastifyRequest } from 'fastify';
import { shownWebhookUrl } from '../budgets/webhook-sealing.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { KINDS, type KindName } from '../catalog/kinds.ts';
import type { AnyEntity } from '../catalog/snapshot.ts';

export interface PublicEntity {
  metadata: AnyEntity['metadata'];
  spec: Record<string, unknown>;
}

/** Whether the caller may read secrets the catalog keeps readable (webhook URLs): an admin, not a viewer. */
export function mayReadWebhookUrls(request: FastifyRequest): boolean {
  const principal = request.controlPrincipal;
  return principal?.kind === 'admin-token' || (principal?.kind === 'user' && principal.role === 'admin');
}

/** How a caller sees a budget's stored webhook URLs: opened whole (an admin) or by origin (a viewer). */
export function webhookUrlView(sealer: Sealer, request: FastifyRequest): (stored: string) => string {
  const whole = mayReadWebhookUrls(request);
  return (stored) => shownWebhookUrl(sealer, stored, whole);
}

/** `webhookUrl`: how a budget's webhook URLs are shown; without it, as stored (sealed, for the catalog file). */
export function toPublicEntity(kind: KindName, entity: AnyEntity, options: { webhookUrl?: (stored: string) => string } = {}): PublicEntity {
  const spec: Record<string, unknown> = { ...(entity.spec as Record<string, unknown>) };
  for (const field of KINDS[kind].writeOnlyFields) delete spec[field];
  if (kind === 'host-keys') spec.hasValue = typeof entity.sealedValue === 'string' && entity.sealedValue.length > 0;
  const view = options.webhookUrl;
  if (kind === 'budgets' && view && Array.isArray(spec.alertWebhooks)) {
    spec.alertWebhooks = (spec.alertWebhooks as Array<{ url: string }>).map((hook) => ({ ...hook, url: view(hook.url) }));
  }
  return { metadata: { ...entity.metadata }, spec };
}

/** Drops fields only the server sets (a caller's value is ignored). */
export function withoutServerFields(kind: KindName, spec: Record<string, unknown>): Record<string, unknown> {
  const out = { ...spec };
  for (const field of KINDS[kind].serverFields) delete out[field];
  return out;
}
