// The ForwardedOwnership a codec builds on the ownership ledger: the codec says what a request
// names and how its refusal reads; the one query, whose the ids are and their record are the same
// for every shape (core/responses-state/forwarded-owners.ts).
import type { ForwardedIdReader, ForwardedOwnership } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';
import type { RelayError } from '../errors.ts';
import type { ResponsesState } from './types.ts';

/** An id a request names, and where (a member or JSON pointer, for the refusal). */
export interface NamedId {
  id: string;
  field: string;
}

export interface LedgerChecks<N extends NamedId> {
  /** The ids the request names; empty, without a parse, when its bytes name none. */
  named(request: Pick<InferenceCall, 'member' | 'memberBytes' | 'mayHold' | 'mayHoldReasoningById' | 'body'>): N[];
  /** The 404 for an id another owner holds, in the shape's words. */
  refusal(named: N): RelayError;
  /** What of the request's answer is recorded (null: nothing). */
  reader(request: Pick<InferenceCall, 'member'>): ForwardedIdReader | null;
}

export function ledgerOwnership<N extends NamedId>(state: ResponsesState, checks: LedgerChecks<N>): ForwardedOwnership {
  return {
    check(request, principal) {
      if (!state.enabled) return null;
      const named = checks.named(request);
      if (named.length === 0) return null;
      return state.foreignForwarded(state.ownerOf(principal), named.map((n) => n.id)).then((foreign) => {
        // Another owner's id is as unknown to this caller as one that never existed.
        if (foreign !== null) throw checks.refusal(named.find((n) => n.id === foreign)!);
      });
    },

    reader(request) {
      return state.enabled ? checks.reader(request) : null;
    },

    claim(ids, principal) {
      state.claimForwarded(state.ownerOf(principal), ids);
    },
  };
}

/** A frame's or an answer's JSON object, or null (not JSON, or not an object). */
export function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}
