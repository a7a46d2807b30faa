// Who may name what a passed-through Responses answer made: OpenAI keeps the response, its items
// and the code containers it ran under the host's shared key, so Relay records their owner
// (core/responses-state/forwarded-owners.ts) and refuses another owner's previous_response_id,
// item_reference or container with the 404 an unknown one gets.
import { RelayError, type InferenceCall } from '../../../core/plugin-api.ts';
import { echoedName, holdsEscapedLetter, ledgerOwnership, type ForwardedOwnership, type NamedId, type ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { containerIdReader, responsesIdReader } from './forwarded-answer-ids.ts';
import { itemContainer, toolContainer } from './containers.ts';

type Request = Pick<InferenceCall, 'member' | 'body'>;

const ITEM_REFERENCE = Buffer.from('item_reference');
/** A container is named under one of these keys (a string value spelling one is escaped: `\"container\"`). */
const CONTAINER = Buffer.from('"container"');
const CONTAINER_ID = Buffer.from('"container_id"');

interface Named extends NamedId {
  kind: 'response' | 'item' | 'container';
}

/**
 * previous_response_id, the ids of item_reference input items, and the containers the tools and
 * input items name; empty without a parse when the bytes name none (`input` and `tools` are parsed
 * only when they hold `item_reference`, `"container"` or `"container_id"`, or an escaped letter).
 */
export function namedIds(request: Request): Named[] {
  const named: Named[] = [];
  const previous = request.member('previous_response_id');
  if (typeof previous === 'string' && previous !== '') named.push({ id: previous, field: 'previous_response_id', kind: 'response' });
  const escaped = holdsEscapedLetter(request.body);
  const references = escaped || request.body.includes(ITEM_REFERENCE);
  const containers = escaped || request.body.includes(CONTAINER) || request.body.includes(CONTAINER_ID);
  if (!references && !containers) return named;
  const input = request.member('input');
  if (Array.isArray(input)) {
    input.forEach((item: unknown, i) => {
      const ref = item as { type?: unknown; id?: unknown } | null;
      if (references && ref && typeof ref === 'object' && ref.type === 'item_reference' && typeof ref.id === 'string' && ref.id !== '') {
        named.push({ id: ref.id, field: `/input/${i}`, kind: 'item' });
      }
      const container = containers ? itemContainer(item) : null;
      if (container) named.push({ id: container.id, field: `/input/${i}${container.at}`, kind: 'container' });
    });
  }
  const tools = containers ? request.member('tools') : undefined;
  if (Array.isArray(tools)) {
    tools.forEach((tool: unknown, i) => {
      const container = toolContainer(tool);
      if (container) named.push({ id: container.id, field: `/tools/${i}${container.at}`, kind: 'container' });
    });
  }
  return named;
}

function refusal(named: Named): RelayError {
  const id = echoedName(named.id);
  switch (named.kind) {
    case 'response':
      return new RelayError('RELAY_ERR_RESPONSE_NOT_FOUND', `Previous response with id '${id}' not found.`, { field: 'previous_response_id' });
    case 'item':
      return new RelayError('RELAY_ERR_ITEM_NOT_FOUND', `Item with id '${id}' not found (input item ${named.field.slice('/input/'.length)} is an item_reference to it).`, { field: named.field });
    case 'container':
      // OpenAI's words for a container it does not know.
      return new RelayError('RELAY_ERR_NOT_FOUND', `Container with id '${id}' not found.`, { field: named.field });
  }
}

/** Whose what a passed-through Responses answer made is: recorded from the answer, checked before forwarding. */
export function responsesOwnership(state: ResponsesState): ForwardedOwnership {
  return ledgerOwnership(state, {
    named: namedIds,
    refusal,
    // store: false: OpenAI keeps no response or item, only the containers it ran.
    reader: (request) => (request.member('store') === false ? containerIdReader : responsesIdReader),
  });
}
