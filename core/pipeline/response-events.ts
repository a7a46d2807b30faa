// A whole canonical response as the stream events that would have produced it (for an
// upstream that answered a streamed request with one JSON body).
import type { CanonicalResponse, ContentPart, StreamEvent } from '../canonical/types.ts';

function partEvents(part: ContentPart, index: number): StreamEvent[] {
  switch (part.type) {
    case 'text':
      return [
        { type: 'part_start', index, part: { type: 'text' } }, { type: 'delta', index, delta: { type: 'text', text: part.text } },
        ...(part.citations ?? []).map((citation): StreamEvent => ({ type: 'delta', index, delta: { type: 'citation', citation } })),
        { type: 'part_end', index },
      ];
    case 'web_search_call':
      return [{ type: 'part_start', index, part }, { type: 'part_end', index }];
    case 'refusal':
      return [{ type: 'part_start', index, part: { type: 'refusal' } }, { type: 'delta', index, delta: { type: 'refusal', text: part.text } }, { type: 'part_end', index }];
    case 'tool_call':
      return [
        { type: 'part_start', index, part: { type: 'tool_call', id: part.id, name: part.name, ...(part.tool_kind ? { tool_kind: part.tool_kind } : {}) } },
        { type: 'delta', index, delta: { type: 'arguments', text: part.arguments } },
        { type: 'part_end', index },
      ];
    case 'reasoning': {
      const events: StreamEvent[] = [{ type: 'part_start', index, part: { type: 'reasoning', ...(part.origin ? { origin: part.origin } : {}), ...(part.id ? { id: part.id } : {}), ...(part.encrypted ? { encrypted: part.encrypted } : {}) } }];
      if (part.text) events.push({ type: 'delta', index, delta: { type: 'reasoning', text: part.text } });
      if (part.signature) events.push({ type: 'delta', index, delta: { type: 'signature', signature: part.signature } });
      events.push({ type: 'part_end', index });
      return events;
    }
    default:
      return [];
  }
}

/** Parts no stream event carries (images, documents, tool results in an answer) are named in `dropped`. */
export function responseToEvents(response: CanonicalResponse, dropped: string[] = []): StreamEvent[] {
  const events: StreamEvent[] = [{ type: 'start', id: response.id, model: response.model }];
  let index = 0;
  for (const part of response.content) {
    const evs = partEvents(part, index);
    if (evs.length > 0) {
      events.push(...evs);
      index++;
    } else dropped.push(part.type);
  }
  events.push({ type: 'end', stop_reason: response.stop_reason, ...(response.stop_sequence ? { stop_sequence: response.stop_sequence } : {}), usage: response.usage });
  return events;
}
