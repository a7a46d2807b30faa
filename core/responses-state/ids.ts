// What can be a Responses id in Relay's store: Postgres refuses text holding NUL (U+0000), so such
// an id is answered as malformed (or unknown) before any query, never as a database outage.

/** The longest response id looked up or kept: OpenAI's are ~50 characters, Relay's 37. */
export const MAX_RESPONSE_ID_LENGTH = 256;

/** Why `id` cannot be a response id (said after "must be a response id: "), or null when it can. */
export function responseIdProblem(id: string): string | null {
  if (id.includes('\u0000')) return 'it holds a NUL character (U+0000)';
  if (id.length > MAX_RESPONSE_ID_LENGTH) return `it is longer than ${MAX_RESPONSE_ID_LENGTH} characters`;
  return null;
}

/** Why `id` cannot be an item id, or null. Long ones can (the store indexes them by their hash). */
export function itemIdProblem(id: string): string | null {
  return id.includes('\u0000') ? 'it holds a NUL character (U+0000)' : null;
}
