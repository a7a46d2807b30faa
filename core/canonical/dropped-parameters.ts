// The parameters a client sent that translation drops, so x-relay-dropped can name them.

/** Those of `names` present in the request body (a dotted name reads one level down, e.g. text.verbosity). */
export function presentParameters(body: unknown, names: readonly string[]): string[] {
  if (body === null || typeof body !== 'object') return [];
  const at = (obj: unknown, key: string): unknown => (obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined);
  return names.filter((name) => name.split('.').reduce<unknown>(at, body) !== undefined);
}

/** A name safe to echo in x-relay-dropped: what every vendor's parameter names look like. */
const PARAMETER_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** Names listed at most; a body of thousands of made-up members names the first ones. */
const MAX_UNKNOWN = 16;

/**
 * Top-level members of `body` its shape does not know (a vendor's newer parameter, a typo): no
 * decoder carries them, so they are named rather than dropped in silence. A name that is not a
 * plain identifier is not echoed; `other members` stands for those.
 */
export function unknownParameters(body: unknown, known: ReadonlySet<string>): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [];
  const names: string[] = [];
  let unnamed = false;
  for (const name of Object.keys(body)) {
    if (known.has(name)) continue;
    if (!PARAMETER_NAME.test(name)) unnamed = true;
    else if (names.length < MAX_UNKNOWN) names.push(name);
  }
  return unnamed ? [...names, 'other members'] : names;
}
