// OpenAI Responses' server-side web search <-> canonical: the `web_search` tool, the
// `web_search_call` output item as a WebSearchCallPart (the item kept as `raw`, sent back
// verbatim only to OpenAI), and the `url_citation` annotations of output_text.
import type { Citation, WebSearchCallPart, WebSearchTool } from '../../../core/plugin-api/canonical.ts';
import { WEB_SEARCH_HISTORY_NAME } from '../../../core/plugin-api/canonical.ts';

export const WEB_SEARCH_ORIGIN = 'openai';
/** What the request includes so that a search's sources come back (they are left out by default). */
export const WEB_SEARCH_SOURCES = 'web_search_call.action.sources';

/** The canonical web search tool as a Responses tool; what it has no field for is named. */
export function webSearchTool(tool: WebSearchTool, dropped: string[]): Record<string, unknown> {
  if (tool.max_uses !== undefined) dropped.push('tools.web_search.max_uses');
  if (tool.blocked_domains !== undefined) dropped.push('tools.web_search.blocked_domains');
  return {
    type: 'web_search',
    ...(tool.allowed_domains === undefined ? {} : { filters: { allowed_domains: tool.allowed_domains } }),
    ...(tool.user_location === undefined ? {} : { user_location: { type: 'approximate', ...tool.user_location } }),
    ...(tool.search_context_size === undefined ? {} : { search_context_size: tool.search_context_size }),
  };
}

/** A search of the history: OpenAI's own item verbatim, or null (named) for another vendor's. */
export function webSearchHistoryItem(part: WebSearchCallPart, dropped: string[]): Record<string, unknown> | null {
  if (part.origin === WEB_SEARCH_ORIGIN && part.raw !== null && typeof part.raw === 'object' && !Array.isArray(part.raw)) return part.raw as Record<string, unknown>;
  dropped.push(WEB_SEARCH_HISTORY_NAME);
  return null;
}

interface SearchItem { id?: unknown; status?: unknown; action?: { type?: unknown; query?: unknown; queries?: unknown; sources?: unknown; url?: unknown } }

/** A `web_search_call` output item as canonical. */
export function searchFromItem(item: SearchItem): WebSearchCallPart {
  const action = item.action ?? {};
  const query = typeof action.query === 'string' ? action.query
    : Array.isArray(action.queries) && typeof action.queries[0] === 'string' ? action.queries[0] : undefined;
  const sources = Array.isArray(action.sources)
    ? (action.sources as Array<{ url?: unknown; title?: unknown } | null>).filter((s) => typeof s?.url === 'string').map((s) => s!).map((s) => ({ url: s.url as string, ...(typeof s.title === 'string' ? { title: s.title } : {}) }))
    : typeof action.url === 'string' ? [{ url: action.url }] : undefined;
  const status = item.status === 'failed' ? 'failed' : item.status === 'completed' ? 'completed' : 'in_progress';
  return {
    type: 'web_search_call', id: typeof item.id === 'string' ? item.id : '',
    ...(query === undefined ? {} : { query }),
    ...(sources === undefined ? {} : { sources }),
    status, origin: WEB_SEARCH_ORIGIN, raw: item,
  };
}

/** A `url_citation` annotation as canonical, with the cited text when the text it indexes is known. */
export function citationFromAnnotation(a: unknown, text?: string): Citation | null {
  const v = (a ?? {}) as { type?: unknown; url?: unknown; title?: unknown; start_index?: unknown; end_index?: unknown };
  if (v.type !== 'url_citation' || typeof v.url !== 'string') return null;
  const start = typeof v.start_index === 'number' ? v.start_index : undefined;
  const end = typeof v.end_index === 'number' ? v.end_index : undefined;
  const cited = text !== undefined && start !== undefined && end !== undefined && end <= text.length ? text.slice(start, end) : undefined;
  return {
    type: 'url_citation', url: v.url,
    ...(typeof v.title === 'string' ? { title: v.title } : {}),
    ...(cited === undefined ? {} : { cited_text: cited }),
    ...(start === undefined ? {} : { start_index: start }),
    ...(end === undefined ? {} : { end_index: end }),
  };
}
