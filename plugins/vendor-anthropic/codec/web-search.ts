// Anthropic's server-side web search (web_search_20250305) <-> canonical: the tool, the
// server_tool_use + web_search_tool_result pair of an answer as one WebSearchCallPart (its raw
// blocks kept, since only Anthropic can read their encrypted_content back), and the
// web_search_result_location citations of text blocks.
import type { Citation, WebSearchCallPart, WebSearchTool } from '../../../core/plugin-api/canonical.ts';
import { WEB_SEARCH_HISTORY_NAME } from '../../../core/plugin-api/canonical.ts';

export const WEB_SEARCH_ORIGIN = 'anthropic';
export const WEB_SEARCH_TOOL_TYPE = 'web_search_20250305';

type Block = Record<string, unknown>;

/** The canonical web search tool as Anthropic's; what it has no field for is named. */
export function webSearchToolBlock(tool: WebSearchTool, dropped: string[]): Block {
  if (tool.search_context_size !== undefined) dropped.push('tools.web_search.search_context_size');
  return {
    type: WEB_SEARCH_TOOL_TYPE, name: 'web_search',
    ...(tool.max_uses === undefined ? {} : { max_uses: tool.max_uses }),
    ...(tool.allowed_domains === undefined ? {} : { allowed_domains: tool.allowed_domains }),
    ...(tool.blocked_domains === undefined ? {} : { blocked_domains: tool.blocked_domains }),
    ...(tool.user_location === undefined ? {} : { user_location: { type: 'approximate', ...tool.user_location } }),
  };
}

/** A search of the history: Anthropic's own blocks verbatim, anything else named and left out. */
export function webSearchHistoryBlocks(part: WebSearchCallPart, dropped: string[]): Block[] {
  if (part.origin === WEB_SEARCH_ORIGIN && Array.isArray(part.raw) && part.raw.length > 0) return part.raw as Block[];
  dropped.push(WEB_SEARCH_HISTORY_NAME);
  return [];
}

/** Whether a block is the server_tool_use of a web search. */
export function isWebSearchUse(block: { type?: unknown; name?: unknown }): boolean {
  return block.type === 'server_tool_use' && block.name === 'web_search';
}

/** A search from its server_tool_use block (still running: no result yet). */
export function searchFromUse(use: Block): WebSearchCallPart {
  const input = (use.input ?? {}) as { query?: unknown };
  return {
    type: 'web_search_call', id: String(use.id ?? ''),
    ...(typeof input.query === 'string' ? { query: input.query } : {}),
    status: 'in_progress', origin: WEB_SEARCH_ORIGIN, raw: [use],
  };
}

/**
 * A search whose input the stream cut short before its query was whole: `incomplete`, without a
 * query; no raw block (one with an unknown input cannot be replayed), yet Anthropic's, so no other vendor is sent it.
 */
export function incompleteSearch(use: Block): WebSearchCallPart {
  return { type: 'web_search_call', id: String(use.id ?? ''), status: 'incomplete', origin: WEB_SEARCH_ORIGIN, raw: [] };
}

/** The search completed (or failed) by its web_search_tool_result block. */
export function withResult(part: WebSearchCallPart, result: Block): WebSearchCallPart {
  const content = result.content;
  // An incomplete search's result alone is not replayable either (a result without its server_tool_use).
  const raw = Array.isArray(part.raw) && part.raw.length > 0 ? [...part.raw, result] : [];
  if (!Array.isArray(content)) return { ...part, status: 'failed', raw };
  const sources = (content as Array<{ type?: unknown; url?: unknown; title?: unknown; page_age?: unknown } | null>)
    .filter((r) => r?.type === 'web_search_result' && typeof r.url === 'string').map((r) => r!)
    .map((r) => ({
      url: r.url as string,
      ...(typeof r.title === 'string' ? { title: r.title } : {}),
      ...(typeof r.page_age === 'string' ? { page_age: r.page_age } : {}),
    }));
  return { ...part, sources, status: 'completed', raw };
}

/** An Anthropic citation as canonical; only web search citations map (document citations have no canonical form). */
export function citationFromAnthropic(c: unknown): Citation | null {
  const v = (c ?? {}) as { type?: unknown; url?: unknown; title?: unknown; cited_text?: unknown };
  if (v.type !== 'web_search_result_location' || typeof v.url !== 'string') return null;
  return {
    type: 'url_citation', url: v.url,
    ...(typeof v.title === 'string' ? { title: v.title } : {}),
    ...(typeof v.cited_text === 'string' ? { cited_text: v.cited_text } : {}),
  };
}

/**
 * A search left without its result (the turn paused mid-search) can only be continued: followed
 * by more conversation, Anthropic refuses it ("tool use ... without a corresponding
 * web_search_tool_result"). Such blocks are left out of every message but the last, and named.
 */
export function withoutUnansweredSearches(messages: Array<{ role: string; content: Block[] }>, dropped: string[]): void {
  const kept: typeof messages = [];
  messages.forEach((m, i) => {
    if (m.role === 'assistant' && i < messages.length - 1) {
      const answered = new Set(m.content.filter((b) => b.type === 'web_search_tool_result').map((b) => b.tool_use_id));
      const content = m.content.filter((b) => !isWebSearchUse(b) || answered.has(b.id));
      if (content.length < m.content.length) dropped.push(WEB_SEARCH_HISTORY_NAME);
      m.content = content;
    }
    if (m.content.length === 0) return;
    // A message left empty is gone: its neighbours of one role become one turn again.
    const last = kept.at(-1);
    if (last && last.role === m.role) last.content.push(...m.content);
    else kept.push(m);
  });
  messages.splice(0, messages.length, ...kept);
}
