// Who may name what a passed-through Responses answer made: OpenAI keeps the response, its items
// and the code containers it ran under the host's shared key, so Relay records their owner
// (core/responses-state/forwarded-owners.ts) and refuses another owner's previous_response_id,
// item_reference, reasoning item named by id or container with the 404 an unknown one gets.
import { RelayError, type InferenceCall } from '../../../core/plugin-api.ts';
import { echoedName, holdsEscapedLetter, ledgerOwnership, type ForwardedOwnership, type NamedId, type ResponsesState } from '../../../core/plugin-api/canonical.ts';
import { containerIdReader, responsesIdReader } from './forwarded-answer-ids.ts';
import { itemContainer, runsInContainer, toolContainer } from './containers.ts';

type Request = Pick<InferenceCall, 'member' | 'memberBytes' | 'mayHold' | 'mayHoldReasoningById'>;

/** Every tool that names or runs a container holds this (a string's text spelling it is escaped: `\"container`). */
const CONTAINER = Buffer.from('"container');

interface Named extends NamedId {
  kind: 'response' | 'item' | 'container';
  /** How an input item names a stored item (kind 'item'). */
  by?: 'item_reference' | 'reasoning';
}

type Item = { type?: unknown; id?: unknown; encrypted_content?: unknown } | null;

/**
 * A reasoning item with an id and no encrypted content: OpenAI looks the id up among the items it
 * keeps (even under store: false: its 404 says such items are not persisted), so it names one.
 */
function namesReasoning(item: Item): item is { type: 'reasoning'; id: string } {
  return item !== null && typeof item === 'object' && item.type === 'reasoning' && typeof item.id === 'string' && item.id !== ''
    && !(typeof item.encrypted_content === 'string' && item.encrypted_content !== '');
}

/**
 * previous_response_id, the ids of item_reference input items and of reasoning items without
 * encrypted content, and the containers the tools name (and the input items, when a tool runs
 * code); empty without a parse when the bytes name none. `tools` is parsed only when its bytes hold
 * `"container` (a code_interpreter tool always does; it is looked for in `tools` alone, ~40 KB of
 * an agent's turn) or an escaped letter, `input` only when the body's scan met an `item_reference`
 * string or an object that may be a reasoning item named by id (or an escaped letter), or a tool
 * runs code. Codex's reasoning items all carry encrypted_content, so its turns parse nothing.
 */
export function namedIds(request: Request): Named[] {
  const named: Named[] = [];
  const previous = request.member('previous_response_id');
  if (typeof previous === 'string' && previous !== '') named.push({ id: previous, field: 'previous_response_id', kind: 'response' });
  const toolBytes = request.memberBytes('tools');
  const tools = toolBytes !== undefined && (toolBytes.includes(CONTAINER) || holdsEscapedLetter(toolBytes)) ? request.member('tools') : undefined;
  let runsCode = false;
  if (Array.isArray(tools)) {
    tools.forEach((tool: unknown, i) => {
      runsCode ||= runsInContainer(tool);
      const container = toolContainer(tool);
      if (container) named.push({ id: container.id, field: `/tools/${i}${container.at}`, kind: 'container' });
    });
  }
  const input = request.mayHold('item_reference') || request.mayHoldReasoningById() || runsCode ? request.member('input') : undefined;
  if (Array.isArray(input)) {
    input.forEach((item: unknown, i) => {
      const ref = item as Item;
      if (ref && typeof ref === 'object' && ref.type === 'item_reference' && typeof ref.id === 'string' && ref.id !== '') {
        named.push({ id: ref.id, field: `/input/${i}`, kind: 'item', by: 'item_reference' });
      }
      if (namesReasoning(ref)) named.push({ id: ref.id, field: `/input/${i}`, kind: 'item', by: 'reasoning' });
      const container = runsCode ? itemContainer(item) : null;
      if (container) named.push({ id: container.id, field: `/input/${i}${container.at}`, kind: 'container' });
    });
  }
  return named;
}

function refusal(named: Named): RelayError {
  const id = echoedName(named.id);
  switch (named.kind) {
    case 'response':
      return new RelayError('RELAY_ERR_RESPONSE_NOT_FOUND', `Previous response with id '${id}' not found.`, { field: 'previous_response_id' });
    case 'item': {
      const what = named.by === 'reasoning' ? 'a reasoning item with its id and no encrypted_content' : 'an item_reference to it';
      return new RelayError('RELAY_ERR_ITEM_NOT_FOUND', `Item with id '${id}' not found (input item ${named.field.slice('/input/'.length)} is ${what}).`, { field: named.field });
    }
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
