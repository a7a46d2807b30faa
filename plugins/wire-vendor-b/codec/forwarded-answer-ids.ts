// The ids a passed-through Messages answer names, for its owner's record (forwarded-owners.ts):
// the code execution container it ran in (`container.id`; streamed, in message_start or
// message_delta) and the files its code wrote (code execution result blocks; streamed, whole in
// content_block_start), read only from an answer or frame that may hold one.
import { parsedObject, type ForwardedIdReader } from '../../../core/plugin-api/canonical.ts';
import { writtenFiles } from './file-ids.ts';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const CONTAINER = '"container"';
const CONTAINER_BYTES = Buffer.from(CONTAINER);
/** A key, not a string's text (which would be escaped: `\"file_id\"`). */
const FILE_ID = '"file_id"';
const FILE_ID_BYTES = Buffer.from(FILE_ID);
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const COLON = 0x3a;
const BRACE = 0x7b;

/** Whether `"container"` is followed by `: {` somewhere: most answers have none or `"container": null`, and are not parsed. */
export function holdsContainerObject(raw: Buffer): boolean {
  for (let at = raw.indexOf(CONTAINER_BYTES); at !== -1; at = raw.indexOf(CONTAINER_BYTES, at + 1)) {
    let p = at + CONTAINER_BYTES.length;
    while (WHITESPACE.has(raw[p]!)) p++;
    if (raw[p] !== COLON) continue;
    p++;
    while (WHITESPACE.has(raw[p]!)) p++;
    if (raw[p] === BRACE) return true;
  }
  return false;
}

function addContainer(container: unknown, ids: Set<string>): void {
  if (isObject(container) && typeof container.id === 'string' && container.id !== '') ids.add(container.id);
}

export const messagesIdReader: ForwardedIdReader = {
  frameIds(event, data, ids) {
    // Small frames, one of each a stream: Anthropic names the container in message_delta (message_start may too).
    if (event === 'message_delta' && data.includes(CONTAINER)) {
      const delta = parsedObject(data)?.delta;
      if (isObject(delta)) addContainer(delta.container, ids);
    } else if (event === 'message_start' && data.includes(CONTAINER)) {
      const message = parsedObject(data)?.message;
      if (isObject(message)) addContainer(message.container, ids);
    } else if (event === 'content_block_start' && data.includes(FILE_ID)) {
      for (const id of writtenFiles(parsedObject(data)?.content_block)) ids.add(id);
    }
  },

  answerIds(body, parse, ids) {
    if (!holdsContainerObject(body) && !body.includes(FILE_ID_BYTES)) return;
    const answer = parse();
    if (!isObject(answer)) return;
    addContainer(answer.container, ids);
    if (Array.isArray(answer.content)) for (const block of answer.content) for (const id of writtenFiles(block)) ids.add(id);
  },
};
