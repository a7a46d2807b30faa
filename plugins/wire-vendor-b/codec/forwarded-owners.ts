// Who may name what a passed-through Messages answer made: Anthropic keeps a code execution
// container, and the files its code wrote (Files API), under the key that made them (so under the
// host's shared key, for every team behind it); a later request runs code in the container by
// naming it in `container`, and reads a file by its `file_id`. Relay records their owner in the
// ledger passed-through Responses answers use (core/responses-state/forwarded-owners.ts) and
// refuses another owner's with a 404 in Anthropic's error shape.
import { RelayError, type InferenceCall } from '../../../core/plugin-api.ts';
import { echoedName, ledgerOwnership, type ForwardedOwnership, type NamedId, type ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { messagesIdReader } from './forwarded-answer-ids.ts';
import { fileIdsIn } from './file-ids.ts';

type Request = Pick<InferenceCall, 'member' | 'mayHold'>;

interface Named extends NamedId {
  kind: 'container' | 'file';
}

/** The container the request names: `container` as an id, or `{id, skills}` (without an id, a new one is made). */
export function namedContainer(request: Pick<InferenceCall, 'member'>): Named | null {
  // Read from its bytes: no parse of the rest, and a request without it costs nothing more.
  const container = request.member('container');
  if (typeof container === 'string' && container !== '') return { id: container, field: '/container', kind: 'container' };
  if (container !== null && typeof container === 'object' && !Array.isArray(container)) {
    const id = (container as { id?: unknown }).id;
    if (typeof id === 'string' && id !== '') return { id, field: '/container/id', kind: 'container' };
  }
  return null;
}

/**
 * The container and the file ids the request names; `messages` is parsed only when the body's scan
 * met a `file_id` string or an escaped letter (no agent's turn does: they are forwarded without a parse).
 */
export function namedIds(request: Request): Named[] {
  const container = namedContainer(request);
  const named: Named[] = container ? [container] : [];
  if (!request.mayHold('file_id')) return named;
  for (const file of fileIdsIn(request.member('messages'), '/messages')) named.push({ ...file, kind: 'file' });
  return named;
}

function refusal(named: Named): RelayError {
  const what = named.kind === 'container' ? 'Container' : 'File';
  return new RelayError('RELAY_ERR_NOT_FOUND', `${what} with id '${echoedName(named.id)}' not found.`, { field: named.field });
}

/** Whose a passed-through Messages answer's container and files are: recorded from the answer, checked before forwarding. */
export function messagesOwnership(state: ResponsesState): ForwardedOwnership {
  return ledgerOwnership(state, { named: namedIds, refusal, reader: () => messagesIdReader });
}
