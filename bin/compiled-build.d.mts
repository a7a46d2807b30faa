// Types for compiled-build.mjs (plain JavaScript, run before any TypeScript loader).
export function compiledIsFresh(root: string): boolean;
