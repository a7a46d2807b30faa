// Responses state on translated routes (issue 44): previous_response_id and item_reference are
// resolved from Relay's store into the conversation before translation, and the answer is kept
// after it, so a conversation continues on any vendor. Visible only to its owner (a relay key).
import { RelayError, validateBody } from '../../../core/plugin-api.ts';
import {
  echoedName, itemIdProblem, responseIdProblem, type ConversationState, type ExpandedRequest, type ForwardPlan, type HostKeyMask, type ResponsesState,
} from '../../../core/plugin-api/canonical.ts';
import { ResponsesInput } from './responses-request.ts';
import { encodeResponsesResponse } from './responses-response.ts';
import { checkStore } from './store-flag.ts';

type Item = Record<string, unknown>;

interface Bookkeeping {
  /** Where the request's own input starts in the expanded input. */
  inputFrom: number;
}

const isObject = (v: unknown): v is Item => v !== null && typeof v === 'object' && !Array.isArray(v);
const isReference = (v: unknown): boolean => isObject(v) && v.type === 'item_reference';

function outputOf(response: Item): Item[] {
  return Array.isArray(response.output) ? response.output.filter(isObject) : [];
}

/** The request's own input as items (a string is one user message); call on an input checked by checkedInput. */
function ownItems(input: unknown): Item[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input.filter(isObject) : [];
}

/**
 * The request's own input as items, after the 400 the request schema gives (naming /input or
 * /input/<i>) for one that is neither a string nor an array of items: the expanded input replaces
 * the client's, so a wrong one would otherwise reach the upstream emptied or trimmed.
 */
function checkedInput(input: unknown): Item[] {
  if (input !== undefined) validateBody(ResponsesInput, input, '/input');
  return ownItems(input);
}

/** Whether the input is one the upstream would read as it is (absent, a string, or an array of items). */
function wellFormedInput(input: unknown): boolean {
  return input === undefined || typeof input === 'string' || (Array.isArray(input) && input.every(isObject));
}

const INPUT_ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', custom_tool_call: 'ctc', custom_tool_call_output: 'ctco', reasoning: 'rs' };

/** Ids for input items that came without one (input_items lists them, item_reference names them). */
function withIds(items: Item[], from: number, responseId: string): Item[] {
  const base = responseId.replace(/^resp_/, '');
  return items.map((item, i) => {
    if (i < from || (typeof item.id === 'string' && item.id !== '')) return item;
    const prefix = INPUT_ID_PREFIX[typeof item.type === 'string' ? item.type : 'message'] ?? 'item';
    return { id: `${prefix}_${base}_in${i - from}`, ...item };
  });
}

/** previous_response_id when the request has one; a 400 naming it when it cannot be a response id (checked before any query). */
function previousId(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value === '') {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', 'previous_response_id must be a response id (a non-empty string).', { field: 'previous_response_id' });
  }
  const problem = responseIdProblem(value);
  if (problem) throw new RelayError('RELAY_ERR_BAD_REQUEST', `previous_response_id must be a response id: ${problem}.`, { field: 'previous_response_id' });
  return value;
}

export function responsesConversationState(state: ResponsesState): ConversationState {
  return {
    async expand(json, principal): Promise<ExpandedRequest> {
      const previous = previousId(json.previous_response_id);
      const own = checkedInput(json.input);
      // Checked before any query: a string such as "yes" must not read as store: true.
      checkStore(json.store);
      const references = previous !== null || own.some(isReference);
      if (!state.enabled) {
        if (references) {
          throw new RelayError('RELAY_ERR_BAD_REQUEST', 'previous_response_id and item_reference need Relay\'s Responses state, which this instance has turned off (responsesState.enabled); send the whole conversation instead.',
            { field: previous !== null ? 'previous_response_id' : 'input' });
        }
        return { json, stored: false };
      }
      const stored = json.store !== false;
      if (!references && !stored) return { json, stored };
      const owner = state.ownerOf(principal);
      let history: Item[] = [];
      if (previous !== null) {
        const earlier = await state.get(owner, previous);
        if (!earlier) throw new RelayError('RELAY_ERR_RESPONSE_NOT_FOUND', `Previous response with id '${previous}' not found.`, { field: 'previous_response_id' });
        history = [...earlier.items, ...outputOf(earlier.response)];
      }
      const resolved: Item[] = [];
      for (const [i, item] of own.entries()) {
        if (!isReference(item)) {
          resolved.push(item);
          continue;
        }
        const id = item.id;
        if (typeof id !== 'string' || id === '') throw new RelayError('RELAY_ERR_BAD_REQUEST', 'An item_reference needs the id of an item.', { field: `/input/${i}/id` });
        const problem = itemIdProblem(id);
        if (problem) throw new RelayError('RELAY_ERR_BAD_REQUEST', `An item_reference needs the id of an item: ${problem}.`, { field: `/input/${i}/id` });
        const found = history.find((h) => h.id === id) ?? resolved.find((h) => h.id === id) ?? await state.findItem(owner, id);
        if (!found) throw new RelayError('RELAY_ERR_ITEM_NOT_FOUND', `Item with id '${echoedName(id)}' not found (input item ${i} is an item_reference to it).`, { field: `/input/${i}` });
        resolved.push(found);
      }
      const input = [...history, ...resolved];
      if (stored && Buffer.byteLength(JSON.stringify(input)) > state.maxBytes) {
        throw new RelayError('RELAY_ERR_RESPONSE_STATE_TOO_LARGE',
          `The conversation is larger than Relay stores (${state.maxBytes} bytes, responsesState.maxBytes): send store: false with the whole conversation, or start a new one.`, { field: 'input' });
      }
      const expanded: Item = { ...json, input };
      delete expanded.previous_response_id;
      const extra: Bookkeeping = { inputFrom: history.length };
      return { json: expanded, stored, extra };
    },

    remember(expanded, response, ctx, principal, keepOut): Promise<void> {
      return keep(state, expanded, encodeResponsesResponse(response, ctx) as Item, 'relay', principal, keepOut);
    },

    async forward(json, principal): Promise<ForwardPlan | null> {
      // A malformed input is forwarded as sent (the upstream refuses it), never rewritten into a valid one.
      if (!state.keepForwarded || json.store === false || !wellFormedInput(json.input)) return null;
      const owner = state.ownerOf(principal);
      const previous = json.previous_response_id;
      let history: Item[] = [];
      let relayOwn = false;
      if (typeof previous === 'string' && previous !== '') {
        const earlier = await state.get(owner, previous);
        // A conversation only the upstream knows: forwarded as sent, and nothing is kept.
        if (!earlier) return null;
        history = [...earlier.items, ...outputOf(earlier.response)];
        relayOwn = earlier.origin !== 'forwarded';
      }
      const resolved: Item[] = [];
      for (const item of ownItems(json.input)) {
        if (!isReference(item)) {
          resolved.push(item);
          continue;
        }
        const id = typeof item.id === 'string' ? item.id : '';
        const found = history.find((h) => h.id === id) ?? await state.findItem(owner, id);
        if (!found) return null;
        relayOwn = true; // an upstream cannot resolve an item Relay made; resolving it here is harmless for its own
        resolved.push(found);
      }
      const input = [...history, ...resolved];
      if (Buffer.byteLength(JSON.stringify(input)) > state.maxBytes) return null;
      const expandedJson: Item = { ...json, input };
      delete expandedJson.previous_response_id;
      const expanded: ExpandedRequest = { json: expandedJson, stored: true, extra: { inputFrom: history.length } satisfies Bookkeeping };
      // References only Relay can resolve (a translated turn's id): the upstream gets the conversation itself.
      return { expanded, substitute: relayOwn ? expandedJson : null, maxAnswerBytes: state.maxBytes };
    },

    rememberForwarded(plan, response, principal, keepOut): void {
      if (!isObject(response) || typeof response.id !== 'string' || response.object !== 'response') return;
      void keep(state, plan.expanded, response, 'forwarded', principal, keepOut);
    },
  };
}

/** Stores a response object with its conversation (without the host key, `keepOut`); input items get ids where they had none. */
function keep(
  state: ResponsesState, expanded: ExpandedRequest, object: Item, origin: 'relay' | 'forwarded', principal: Parameters<ResponsesState['ownerOf']>[0], keepOut: HostKeyMask | null,
): Promise<void> {
  const id = object.id as string;
  const { inputFrom } = (expanded.extra ?? { inputFrom: 0 }) as Bookkeeping;
  const items = withIds(ownItems(expanded.json.input), inputFrom, id);
  const ownIds = [...items.slice(inputFrom), ...outputOf(object)].map((item) => item.id).filter((v): v is string => typeof v === 'string');
  return state.save(state.ownerOf(principal), id, { response: object, items, inputFrom, origin }, ownIds, keepOut);
}
