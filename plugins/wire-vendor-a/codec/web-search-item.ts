// Web searches the upstream ran, as Responses `web_search_call` items, and text citations as
// `url_citation` annotations. A search another vendor ran (Anthropic's, whose results are
// encrypted) is sealed into the item's id (`ws_relay1.` + base64url JSON naming its origin and
// its raw blocks): clients hand items back with their id, and Relay restores the canonical part
// so the vendor adapter replays it only to the vendor that made it.
import type { Citation, WebSearchCallPart } from '../../../core/plugin-api/canonical.ts';

const PREFIX = 'ws_relay1.';
/** Origin of a web_search_call item without an envelope: OpenAI ran it. */
export const NATIVE_ORIGIN = 'openai';

type SearchFields = Pick<WebSearchCallPart, 'id' | 'query' | 'sources' | 'status' | 'origin' | 'raw'>;

/** Responses has no `incomplete` search: one whose query never came did not complete, so `failed`. */
function itemStatus(part: SearchFields): string {
  return part.status === 'incomplete' ? 'failed' : part.status ?? 'completed';
}

/** The item's id: OpenAI's own, or the sealed envelope of another vendor's search. */
function sealedId(part: SearchFields): string {
  if (part.origin === NATIVE_ORIGIN || part.origin === undefined || part.raw === undefined) return part.id;
  return PREFIX + Buffer.from(JSON.stringify({ o: part.origin, i: part.id, r: part.raw })).toString('base64url');
}

/** A canonical search as a Responses `web_search_call` item. */
export function webSearchItem(part: SearchFields, status = itemStatus(part)): Record<string, unknown> {
  const action: Record<string, unknown> = { type: 'search' };
  if (part.query !== undefined) action.query = part.query;
  if (part.sources !== undefined) action.sources = part.sources.map((s) => ({ type: 'url', url: s.url }));
  return { id: sealedId(part), type: 'web_search_call', status, action };
}

interface ClientItem { id?: unknown; status?: unknown; action?: { query?: unknown; queries?: unknown; sources?: unknown } }

/** A `web_search_call` item a client sends back -> the canonical part it stands for. */
export function webSearchPart(item: ClientItem): WebSearchCallPart {
  const id = typeof item.id === 'string' ? item.id : '';
  if (id.startsWith(PREFIX)) {
    try {
      const envelope = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString('utf8')) as { o?: unknown; i?: unknown; r?: unknown };
      if (typeof envelope.o === 'string' && typeof envelope.i === 'string') {
        return { type: 'web_search_call', id: envelope.i, origin: envelope.o, raw: envelope.r, ...common(item) };
      }
    } catch {
      // not ours after all: OpenAI's own
    }
  }
  return { type: 'web_search_call', id, origin: NATIVE_ORIGIN, raw: item, ...common(item) };
}

/** The vendor that ran a search whose item id is Relay's envelope, or null for OpenAI's own id. */
export function sealedSearchOrigin(id: string): string | null {
  return id.startsWith(PREFIX) ? webSearchPart({ id }).origin ?? null : null;
}

function common(item: ClientItem): Pick<WebSearchCallPart, 'query' | 'sources' | 'status'> {
  const action = item.action ?? {};
  const query = typeof action.query === 'string' ? action.query
    : Array.isArray(action.queries) && typeof action.queries[0] === 'string' ? action.queries[0] : undefined;
  const sources = Array.isArray(action.sources)
    ? (action.sources as Array<{ url?: unknown } | null>).filter((s) => typeof s?.url === 'string').map((s) => s!).map((s) => ({ url: s.url as string }))
    : undefined;
  const status = item.status === 'failed' ? 'failed' : item.status === 'completed' ? 'completed' : item.status === undefined ? undefined : 'in_progress';
  return { ...(query === undefined ? {} : { query }), ...(sources === undefined ? {} : { sources }), ...(status === undefined ? {} : { status }) };
}

/** Citations as `url_citation` annotations of an output_text; one without a span cites the whole text. */
export function urlAnnotations(text: string, citations: readonly Citation[] | undefined): Record<string, unknown>[] {
  return (citations ?? []).map((c) => ({
    type: 'url_citation', url: c.url, title: c.title ?? '',
    start_index: c.start_index ?? 0, end_index: c.end_index ?? text.length,
  }));
}
