// Slugs: stable, URL-safe names derived from display names (model slugs are what clients send
// as `model`, so dots, dashes and underscores are kept: gpt-4.1, claude-sonnet-4_5).

const SLUG_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export function isValidSlug(s: string): boolean {
  return SLUG_RE.test(s);
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
