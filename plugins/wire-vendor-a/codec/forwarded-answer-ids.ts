// The ids a passed-through Responses answer names, for its owner's record (forwarded-owners.ts):
// the response's id, each output item's, and the code containers its items ran in, read from the
// small frames that carry them.
import { parsedObject, type ForwardedIdReader } from '../../../core/plugin-api/canonical.ts';
import { itemContainer } from './containers.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
/** Only an item naming its container has this key (a string value spelling it is escaped: `\"container_id\"`). */
const CONTAINER_ID = '"container_id"';
const CONTAINER_ID_BYTES = Buffer.from(CONTAINER_ID);

function addContainer(item: unknown, ids: Set<string>): void {
  const container = itemContainer(item);
  if (container) ids.add(container.id);
}

function addItem(item: unknown, ids: Set<string>): void {
  if (isObject(item) && typeof item.id === 'string') ids.add(item.id);
  addContainer(item, ids);
}

function outputOf(answer: unknown): unknown[] {
  return isObject(answer) && Array.isArray(answer.output) ? answer.output : [];
}

/**
 * A stored answer (store not false): the response's id comes first, each output item's when the
 * item starts, both small frames. An item's `.done` repeats it with all its content, so it is
 * parsed only when it names a container (a container may be known only once the call ran).
 */
export const responsesIdReader: ForwardedIdReader = {
  frameIds(event, data, ids) {
    if (event === 'response.created') {
      const response = parsedObject(data)?.response;
      if (isObject(response) && typeof response.id === 'string') ids.add(response.id);
    } else if (event === 'response.output_item.added') {
      addItem(parsedObject(data)?.item, ids);
    } else if (event === 'response.output_item.done' && data.includes(CONTAINER_ID)) {
      addContainer(parsedObject(data)?.item, ids);
    }
  },

  answerIds(_body, parse, ids) {
    const answer = parse();
    if (isObject(answer) && typeof answer.id === 'string') ids.add(answer.id);
    for (const item of outputOf(answer)) addItem(item, ids);
  },
};

/**
 * An answer to store: false: OpenAI keeps neither the response nor its items, but a container it
 * made lives on (20 minutes after its last use); only frames and answers naming one are parsed.
 */
export const containerIdReader: ForwardedIdReader = {
  frameIds(event, data, ids) {
    if ((event === 'response.output_item.added' || event === 'response.output_item.done') && data.includes(CONTAINER_ID)) {
      addContainer(parsedObject(data)?.item, ids);
    }
  },

  answerIds(body, parse, ids) {
    if (!body.includes(CONTAINER_ID_BYTES)) return;
    for (const item of outputOf(parse())) addContainer(item, ids);
  },
};
