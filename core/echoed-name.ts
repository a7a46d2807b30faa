// A name the caller sent (a model, an item id), as an error message echoes it: the first
// MAX_ECHOED_NAME characters and its full length, so a 1 MB name is not sent back (nor logged) whole.

/** The most characters of a caller's name an error message repeats; slugs and ids are far shorter. */
export const MAX_ECHOED_NAME = 200;

/** `name` as it is when short; else its first MAX_ECHOED_NAME characters, an ellipsis and its length. */
export function echoedName(name: string): string {
  if (name.length <= MAX_ECHOED_NAME) return name;
  // Never half of a surrogate pair: the body would carry a lone surrogate.
  const end = /[\uD800-\uDBFF]/.test(name.charAt(MAX_ECHOED_NAME - 1)) ? MAX_ECHOED_NAME - 1 : MAX_ECHOED_NAME;
  return `${name.slice(0, end)}… (${name.length} characters)`;
}
