// The parameters a client sent that translation drops, so x-relay-dropped can name them.

/** Those of `names` present in the request body (a dotted name reads one level down, e.g. text.verbosity). */
export function presentParameters(body: unknown, names: readonly string[]): string[] {
  if (body === null || typeof body !== 'object') return [];
  const at = (obj: unknown, key: string): unknown => (obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined);
  return names.filter((name) => name.split('.').reduce<unknown>(at, body) !== undefined);
}
