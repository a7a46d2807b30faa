// Who may name what a passed-through Messages answer made: Anthropic keeps a code execution
// container under the key that made it (so under the host's shared key, for every team behind it),
// and a later request runs code in it by naming it in `container`. Relay records its owner in the
// ledger passed-through Responses answers use (core/responses-state/forwarded-owners.ts) and
// refuses another owner's with a 404 in Anthropic's error shape.
import { RelayError, type InferenceCall } from '../../../core/plugin-api.ts';
import { echoedName, type ForwardedOwnership, type ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { messagesIdReader } from './forwarded-answer-ids.ts';

type Request = Pick<InferenceCall, 'member' | 'body'>;

interface Named {
  id: string;
  field: string;
}

/** The container the request names: `container` as an id, or `{id, skills}` (without an id, a new one is made). */
export function namedContainer(request: Request): Named | null {
  // Read from its bytes: no parse of the rest, and a request without it costs nothing more.
  const container = request.member('container');
  if (typeof container === 'string' && container !== '') return { id: container, field: '/container' };
  if (container !== null && typeof container === 'object' && !Array.isArray(container)) {
    const id = (container as { id?: unknown }).id;
    if (typeof id === 'string' && id !== '') return { id, field: '/container/id' };
  }
  return null;
}

/** Whose a passed-through Messages answer's container is: recorded from the answer, checked before forwarding. */
export function messagesOwnership(state: ResponsesState): ForwardedOwnership {
  return {
    check(request, principal) {
      if (!state.enabled) return null;
      const named = namedContainer(request);
      if (named === null) return null;
      return state.foreignForwarded(state.ownerOf(principal), [named.id]).then((foreign) => {
        // Another owner's container is as unknown to this caller as one that never existed.
        if (foreign !== null) throw new RelayError('RELAY_ERR_NOT_FOUND', `Container with id '${echoedName(named.id)}' not found.`, { field: named.field });
      });
    },

    reader() {
      return state.enabled ? messagesIdReader : null;
    },

    claim(ids, principal) {
      state.claimForwarded(state.ownerOf(principal), ids);
    },
  };
}
