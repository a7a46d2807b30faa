// What can be a Responses id in Relay's store: Postgres refuses text holding NUL (U+0000), so such
// an id is answered as malformed (or unknown) before any query, never as a database outage.
import { createHash } from 'node:crypto';

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

/** Longer item ids are indexed by their hash: a btree row holds ~2.7 KB at most. */
const MAX_INDEXED_ID = 256;
/** An id carrying another vendor's search (`ws_relay1.` + its blocks) holds the conversation's content: never stored in the clear. */
const CONTENT_ID = 'relay1.';

/** An id as indexed; hashed when long, content-bearing, or holding NUL (Postgres text cannot, and a write must not fail for it). */
export function indexedItemId(id: string): string {
  return id.length <= MAX_INDEXED_ID && !id.includes(CONTENT_ID) && itemIdProblem(id) === null ? id : `sha256:${createHash('sha256').update(id).digest('base64url')}`;
}
