// Who may name a passed-through Responses answer: OpenAI keeps it under the host's shared key, so
// Relay records its owner (core/responses-state/forwarded-owners.ts) and refuses another owner's
// previous_response_id or item_reference with the 404 the translated path gives for an unknown one.
import { RelayError, type InferenceCall } from '../../../core/plugin-api.ts';
import { responsesAnswerIds, responsesFrameIds } from './forwarded-answer-ids.ts';
import { echoedName, type ForwardedOwnership, type ResponsesState } from '../../../core/plugin-api/canonical.ts';

type Request = Pick<InferenceCall, 'member' | 'body'>;

const ITEM_REFERENCE = Buffer.from('item_reference');
/** `"item_reference"` may be written with \u escapes: a body holding any is read in full. */
const UNICODE_ESCAPE = Buffer.from('\\u');

interface Named {
  id: string;
  /** The request member that names it, for the 404's `param`. */
  field: string;
}

/** previous_response_id and the ids of item_reference input items; empty without a parse when the bytes hold no reference. */
export function namedIds(request: Request): Named[] {
  const named: Named[] = [];
  const previous = request.member('previous_response_id');
  if (typeof previous === 'string' && previous !== '') named.push({ id: previous, field: 'previous_response_id' });
  if (!request.body.includes(ITEM_REFERENCE) && !request.body.includes(UNICODE_ESCAPE)) return named;
  const input = request.member('input');
  if (!Array.isArray(input)) return named;
  input.forEach((item: unknown, i) => {
    const ref = item as { type?: unknown; id?: unknown } | null;
    if (ref && typeof ref === 'object' && ref.type === 'item_reference' && typeof ref.id === 'string' && ref.id !== '') named.push({ id: ref.id, field: `/input/${i}` });
  });
  return named;
}

function refusal(named: Named): RelayError {
  return named.field === 'previous_response_id'
    ? new RelayError('RELAY_ERR_RESPONSE_NOT_FOUND', `Previous response with id '${echoedName(named.id)}' not found.`, { field: 'previous_response_id' })
    : new RelayError('RELAY_ERR_ITEM_NOT_FOUND', `Item with id '${echoedName(named.id)}' not found (input item ${named.field.slice('/input/'.length)} is an item_reference to it).`, { field: named.field });
}

/** Whose a passed-through Responses answer is: recorded from the answer, checked before forwarding. */
export function responsesOwnership(state: ResponsesState): ForwardedOwnership {
  return {
    check(request, principal) {
      if (!state.enabled) return null;
      const named = namedIds(request);
      if (named.length === 0) return null;
      return state.foreignForwarded(state.ownerOf(principal), named.map((n) => n.id)).then((foreign) => {
        // Another owner's answer is as unknown to this caller as one that never existed.
        if (foreign !== null) throw refusal(named.find((n) => n.id === foreign)!);
      });
    },

    claims(request) {
      return state.enabled && request.member('store') !== false;
    },

    frameIds: responsesFrameIds,

    answerIds(_body, parsed, ids) {
      responsesAnswerIds(parsed(), ids);
    },

    claim(ids, principal) {
      state.claimForwarded(state.ownerOf(principal), ids);
    },
  };
}
