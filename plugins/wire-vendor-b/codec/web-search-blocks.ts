// Web searches the upstream ran, as Anthropic server_tool_use + web_search_tool_result blocks,
// and text citations as web_search_result_location. Anthropic's own search goes out as its raw
// blocks. Another vendor's (OpenAI's web_search_call) has no encrypted_content: its results carry
// url, title and page_age, `encrypted_content` and a citation's `encrypted_index` are empty, and
// the search is sealed into the server_tool_use id (`srvtoolu_relay1.` + base64url JSON naming its
// origin and its raw item), so that when the client sends the blocks back Relay restores the
// canonical part and the vendor adapter replays it only to the vendor that made it.
import type { Citation, WebSearchCallPart } from '../../../core/plugin-api/canonical.ts';

const PREFIX = 'srvtoolu_relay1.';
/** Origin of server tool blocks without an envelope: Anthropic ran the search. */
export const NATIVE_ORIGIN = 'anthropic';

type Block = Record<string, unknown>;
type SearchFields = Pick<WebSearchCallPart, 'id' | 'query' | 'sources' | 'status' | 'origin' | 'raw'>;

/** The blocks of a search: Anthropic's own verbatim, another vendor's rebuilt from what is known. */
export function webSearchBlocks(part: SearchFields): Block[] {
  if (part.origin === NATIVE_ORIGIN && Array.isArray(part.raw) && part.raw.length > 0) return part.raw as Block[];
  const id = part.origin === undefined || part.raw === undefined
    ? part.id
    : PREFIX + Buffer.from(JSON.stringify({ o: part.origin, i: part.id, r: part.raw })).toString('base64url');
  const use: Block = { type: 'server_tool_use', id, name: 'web_search', input: part.query === undefined ? {} : { query: part.query } };
  // No result block to show: the search had none (paused), or its input broke off (incomplete).
  if (part.status === 'in_progress' || part.status === 'incomplete') return [use];
  const content = part.status === 'failed'
    ? { type: 'web_search_tool_result_error', error_code: 'unavailable' }
    : (part.sources ?? []).map((s) => ({ type: 'web_search_result', url: s.url, title: s.title ?? s.url, page_age: s.page_age ?? null, encrypted_content: '' }));
  return [use, { type: 'web_search_tool_result', tool_use_id: id, content }];
}

/** A web search's server_tool_use block from a client -> the canonical part (its result not yet read). */
export function searchFromUse(use: { id?: unknown; input?: unknown }): WebSearchCallPart {
  const id = typeof use.id === 'string' ? use.id : '';
  const query = (use.input as { query?: unknown } | null)?.query;
  const fields = typeof query === 'string' ? { query } : {};
  if (id.startsWith(PREFIX)) {
    try {
      const envelope = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString('utf8')) as { o?: unknown; i?: unknown; r?: unknown };
      if (typeof envelope.o === 'string' && typeof envelope.i === 'string') {
        return { type: 'web_search_call', id: envelope.i, ...fields, status: 'in_progress', origin: envelope.o, raw: envelope.r };
      }
    } catch {
      // not ours after all: Anthropic's own
    }
  }
  return { type: 'web_search_call', id, ...fields, status: 'in_progress', origin: NATIVE_ORIGIN, raw: [use] };
}

/** The part completed by its web_search_tool_result block (kept raw only for Anthropic's own). */
export function withResult(part: WebSearchCallPart, result: Block): WebSearchCallPart {
  const content = result.content;
  const out: WebSearchCallPart = { ...part, status: Array.isArray(content) ? 'completed' : 'failed' };
  if (Array.isArray(content)) {
    out.sources = (content as Array<{ url?: unknown; title?: unknown; page_age?: unknown } | null>).filter((r) => typeof r?.url === 'string').map((r) => r!).map((r) => ({
      url: r.url as string,
      ...(typeof r.title === 'string' ? { title: r.title } : {}),
      ...(typeof r.page_age === 'string' ? { page_age: r.page_age } : {}),
    }));
  }
  if (part.origin === NATIVE_ORIGIN && Array.isArray(part.raw)) out.raw = [...part.raw, result];
  return out;
}

/** A canonical citation as Anthropic's; cited_text is the span it indexes when it has no text of its own. */
export function anthropicCitation(c: Citation, text?: string): Block {
  const cited = c.cited_text ?? (text !== undefined && c.start_index !== undefined && c.end_index !== undefined ? text.slice(c.start_index, c.end_index) : '');
  return { type: 'web_search_result_location', url: c.url, title: c.title ?? null, cited_text: cited, encrypted_index: '' };
}

/** The vendor that ran a search whose server_tool_use id is Relay's envelope, or null for Anthropic's own id. */
export function sealedSearchOrigin(id: string): string | null {
  return id.startsWith(PREFIX) ? searchFromUse({ id }).origin ?? null : null;
}
