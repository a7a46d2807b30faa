// What a Responses upstream must not be sent when a conversation is passed through: items Relay
// made from another vendor's answer (reasoning sealed in a `relay1.` envelope, a search in a
// `ws_relay1.` id). A conversation that began on Anthropic and fails over to OpenAI would otherwise
// send OpenAI an encrypted_content it cannot read, and every later turn would be refused.
import { holdsEnvelope } from '../../../core/plugin-api/canonical.ts';
import { sealedReasoningOrigin } from './reasoning-envelope.ts';
import { sealedSearchOrigin } from './web-search-item.ts';

type Item = Record<string, unknown>;

/** The x-relay-dropped name of an item another vendor than `upstream` made, or null. */
function foreignName(item: unknown, upstream: string): string | null {
  if (item === null || typeof item !== 'object') return null;
  const { type, encrypted_content: encrypted, id } = item as Item;
  const origin = type === 'reasoning' && typeof encrypted === 'string' ? sealedReasoningOrigin(encrypted)
    : type === 'web_search_call' && typeof id === 'string' ? sealedSearchOrigin(id) : null;
  return origin === null || origin === upstream ? null : `history.${type as string}`;
}

/**
 * The request without the input items a vendor other than `upstream` (an adapter id) made, naming
 * each kind taken out in `dropped`; null when it has none (the body goes as received).
 */
export function withoutForeignItems(raw: Buffer | string, json: () => Record<string, unknown>, upstream: string, dropped: string[]): Record<string, unknown> | null {
  // A body without an envelope is forwarded as received.
  if (!holdsEnvelope(raw)) return null;
  const request = json();
  if (!Array.isArray(request.input)) return null;
  const names = new Set<string>();
  const input = request.input.filter((item) => {
    const name = foreignName(item, upstream);
    if (name) names.add(name);
    return name === null;
  });
  if (names.size === 0) return null;
  dropped.push(...names);
  return { ...request, input };
}
