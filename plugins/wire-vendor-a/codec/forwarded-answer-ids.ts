// The ids a passed-through Responses answer names, for its owner's record (forwarded-owners.ts):
// the response's id and each output item's, read from the small frames that carry them.
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function parsed(data: string): Json | null {
  try {
    const value: unknown = JSON.parse(data);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function addItemIds(item: unknown, ids: Set<string>): void {
  if (isObject(item) && typeof item.id === 'string') ids.add(item.id);
}

/**
 * One frame of a streamed answer. The response's id comes first, each output item's when the item
 * starts: small frames (an item's `.done` repeats its id with all its content, so it is not parsed).
 */
export function responsesFrameIds(event: string | undefined, data: string, ids: Set<string>): void {
  if (event === 'response.created') {
    const response = parsed(data)?.response;
    if (isObject(response) && typeof response.id === 'string') ids.add(response.id);
  } else if (event === 'response.output_item.added') {
    addItemIds(parsed(data)?.item, ids);
  }
}

/** A whole answer: the response object. */
export function responsesAnswerIds(answer: unknown, ids: Set<string>): void {
  if (!isObject(answer)) return;
  if (typeof answer.id === 'string') ids.add(answer.id);
  if (Array.isArray(answer.output)) for (const item of answer.output) addItemIds(item, ids);
}
