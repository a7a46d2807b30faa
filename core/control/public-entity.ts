// What the API shows of an entity: metadata and spec, never secret material. Relay keys lose
// keyHash; host keys lose sealedValue and any write-only field, and say hasValue instead. A budget's
// webhook URLs (Slack's hold their secret in the path; stored sealed with a master key) are shown
// whole only to an admin, by origin to a viewer. A host's header values (a gateway's key; stored
// sealed with a master key) are shown whole only to an admin, as a fixed mask to a viewer.
import type { FastifyRequest } from 'fastify';
import { shownWebhookUrl } from '../budgets/webhook-sealing.ts';
import { shownHostHeaders } from '../catalog/host-header-sealing.ts';
import type { Sealer } from '../crypto/sealing.ts';
import { KINDS, type KindName } from '../catalog/kinds.ts';
import type { AnyEntity } from '../catalog/snapshot.ts';

export interface PublicEntity {
  metadata: AnyEntity['metadata'];
  spec: Record<string, unknown>;
}

/** Whether the caller may read secrets the catalog keeps readable (webhook URLs, host header values): an admin, not a viewer. */
export function mayReadWebhookUrls(request: FastifyRequest): boolean {
  const principal = request.controlPrincipal;
  return principal?.kind === 'admin-token' || (principal?.kind === 'user' && principal.role === 'admin');
}

/** How a caller sees a budget's stored webhook URLs: opened whole (an admin) or by origin (a viewer). */
export function webhookUrlView(sealer: Sealer, request: FastifyRequest): (stored: string) => string {
  const whole = mayReadWebhookUrls(request);
  return (stored) => shownWebhookUrl(sealer, stored, whole);
}

/** How a caller sees a host's stored header values: opened (an admin) or masked (a viewer). */
export function hostHeadersView(sealer: Sealer, request: FastifyRequest): (stored: Record<string, string>) => Record<string, string> {
  const whole = mayReadWebhookUrls(request);
  return (stored) => shownHostHeaders(sealer, stored, whole);
}

/** What a caller is shown of secrets the catalog keeps readable; without a view, as stored (sealed, for the catalog file). */
export interface SecretViews {
  /** How a budget's webhook URLs are shown. */
  webhookUrl?: (stored: string) => string;
  /** How a host's header values are shown. */
  hostHeaders?: (stored: Record<string, string>) => Record<string, string>;
}

/** The views of a control-plane caller: whole to an admin, by origin or masked to a viewer. */
export function secretViews(sealer: Sealer, request: FastifyRequest): SecretViews {
  return { webhookUrl: webhookUrlView(sealer, request), hostHeaders: hostHeadersView(sealer, request) };
}

export function toPublicEntity(kind: KindName, entity: AnyEntity, options: SecretViews = {}): PublicEntity {
  const spec: Record<string, unknown> = { ...(entity.spec as Record<string, unknown>) };
  for (const field of KINDS[kind].writeOnlyFields) delete spec[field];
  if (kind === 'host-keys') spec.hasValue = typeof entity.sealedValue === 'string' && entity.sealedValue.length > 0;
  const view = options.webhookUrl;
  if (kind === 'budgets' && view && Array.isArray(spec.alertWebhooks)) {
    spec.alertWebhooks = (spec.alertWebhooks as Array<{ url: string }>).map((hook) => ({ ...hook, url: view(hook.url) }));
  }
  if (kind === 'hosts' && options.hostHeaders && spec.headers !== null && typeof spec.headers === 'object') {
    spec.headers = options.hostHeaders(spec.headers as Record<string, string>);
  }
  return { metadata: { ...entity.metadata }, spec };
}

/** Drops fields only the server sets (a caller's value is ignored). */
export function withoutServerFields(kind: KindName, spec: Record<string, unknown>): Record<string, unknown> {
  const out = { ...spec };
  for (const field of KINDS[kind].serverFields) delete out[field];
  return out;
}
