// What Relay keeps of a Responses request it translated, so previous_response_id and
// item_reference resolve on every vendor (issue 44). The plugin-facing side of the store.
import type { Principal } from '../hooks.ts';
import type { HostKeyMask } from '../pipeline/credential-scrub.ts';

export interface StoredResponse {
  /** The Responses object as the client got it (its `output` items carry ids). */
  response: Record<string, unknown>;
  /** The conversation sent upstream: earlier turns' items, then this request's own input, each with an id. */
  items: Record<string, unknown>[];
  /** Where this request's own input starts in `items` (what input_items lists). */
  inputFrom: number;
  /** `forwarded`: an upstream's own response that Relay kept a copy of (its id is the upstream's too). */
  origin?: 'relay' | 'forwarded';
}

export interface ResponsesState {
  /** False when config responsesState.enabled is off: references are refused, nothing is kept. */
  readonly enabled: boolean;
  /** The largest conversation kept, in bytes of JSON. */
  readonly maxBytes: number;
  /** Keep copies of what passthrough forwards, for models that may fail over to another vendor. */
  readonly keepForwarded: boolean;
  /** Who owns what this principal stores: its relay key, or its policy (config responsesState.scope). */
  ownerOf(principal: Principal): string;
  /**
   * Keeps a response; resolves once it is written (never rejects: a failed write is logged). The
   * pipeline waits for it, briefly, before an answer's last byte, so a follow-up sent to any
   * instance finds it; a lookup that misses while writes are pending waits for them first.
   * `keepOut`: the host key of the route that answered; the upstream may have quoted it, and what is
   * kept is served again (GET, previous_response_id), so it is masked as in the caller's copy.
   */
  save(owner: string, id: string, stored: StoredResponse, ownItemIds: string[], keepOut: HostKeyMask | null): Promise<void>;
  /** The owner's stored response, or null (unknown, expired, or another owner's). */
  get(owner: string, id: string): Promise<StoredResponse | null>;
  /** An item the owner's stored responses added (input or output), or null. */
  findItem(owner: string, itemId: string): Promise<Record<string, unknown> | null>;
  /** Deletes the owner's stored response; false when there was none. */
  delete(owner: string, id: string): Promise<boolean>;
  /**
   * Records that what a passed-through answer made upstream (its response, output items, code
   * containers) is the owner's; returns at once (written in the background, a failed write is
   * logged). The owner naming an id again renews its record; another owner's stays until it expires.
   * Nothing when off.
   */
  claimForwarded(owner: string, ids: string[]): void;
  /** The first of `ids` a passed-through answer of another owner holds, or null; one query. Throws a 503 RelayError when the database does not answer. */
  foreignForwarded(owner: string, ids: string[]): Promise<string | null>;
}
