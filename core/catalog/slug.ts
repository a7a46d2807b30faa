// Slugs: stable, URL-safe names derived from display names (model slugs are what clients send
// as `model`, so dots, dashes and underscores are kept: gpt-4.1, claude-sonnet-4_5).
import type { KindName } from './kinds.ts';

const SLUG_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Path segments that the control API routes statically under /api/{plural}/ and that therefore
 * shadow GET /api/{plural}/:ref (Fastify prefers a static route to a parametric one): an entity
 * with such a slug could never be read by it. `by-id` prefixes every kind's PUT and DELETE (and
 * relay keys' rotate); `health` is GET /api/host-keys/health (core/control/host-key-routes.ts),
 * `last-used` GET /api/relay-keys/last-used and /api/host-keys/last-used (core/control/last-used-routes.ts).
 * test/core/catalog-validation.test.ts walks the control routes and fails when a static segment
 * is missing here.
 */
const RESERVED_FOR_EVERY_KIND = ['by-id'];
const RESERVED_BY_KIND: Partial<Record<KindName, readonly string[]>> = {
  'host-keys': ['health', 'last-used'],
  'relay-keys': ['last-used'],
};

export function isValidSlug(s: string): boolean {
  return SLUG_RE.test(s);
}

/**
 * Why `slug` cannot name an entity of `kind` even though it is well formed, or null when it can.
 * A UUID-shaped slug is refused because GET /api/{plural}/{ref} reads a UUID-form ref as an id
 * first: the slug could equal (or later be shadowed by) another entity's id.
 */
export function reservedSlugReason(kind: KindName, slug: string): string | null {
  if (UUID_RE.test(slug)) return 'must not have the form of a UUID (a UUID-form reference is read as an id)';
  if (RESERVED_FOR_EVERY_KIND.includes(slug) || RESERVED_BY_KIND[kind]?.includes(slug)) {
    return `${slug} is reserved: /api/${kind}/${slug} is a path of the API itself`;
  }
  return null;
}

export function slugCandidate(displayName: string): string {
  const s = displayName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '')
    .slice(0, 56);
  return s || 'entity';
}
