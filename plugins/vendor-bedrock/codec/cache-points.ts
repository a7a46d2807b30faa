// Prompt-cache points for a Converse request to Claude. Relay's clients of Converse are translated
// (Codex, Chat SDKs, a Messages client whose cache_control has no canonical field), so none sends
// its own; without them every turn of an agent loop pays the full input price for the whole
// conversation. A cachePoint block after the tools, after the system prompt, at the end of the last
// message (what the next turn reads) and at the end of the user message before it (what the
// previous turn wrote, found however many blocks a turn added): the four Bedrock allows.
import { isClaudeModel } from './thinking.ts';

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;
/** Claude models on Bedrock that take no cachePoint (prompt caching came with Claude 3.7 Sonnet and 3.5 Haiku). */
const UNCACHED_CLAUDE = /claude-(?:v2|instant|3-(?:haiku|sonnet|opus)|3-5-sonnet)/i;

/** Whether Converse takes cache points for this upstream model. */
export function takesCachePoints(upstreamModel: string): boolean {
  return isClaudeModel(upstreamModel) && !UNCACHED_CLAUDE.test(upstreamModel);
}

type Body = Record<string, unknown>;

/** Adds the cache points to `body`, a Converse request Relay encoded (so it holds none of its own). */
export function withCachePoints(body: Body): Body {
  const tools = (body.toolConfig as { tools?: unknown[] } | undefined)?.tools;
  if (Array.isArray(tools) && tools.length > 0) tools.push(CACHE_POINT);
  if (Array.isArray(body.system) && body.system.length > 0) body.system.push(CACHE_POINT);
  const messages = body.messages as Array<{ role?: unknown; content: unknown[] }> | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return body;
  const previousUser = messages.findLastIndex((m, i) => i < messages.length - 1 && m.role === 'user');
  for (const message of [messages[previousUser], messages.at(-1)]) {
    if (message && Array.isArray(message.content) && message.content.length > 0) message.content.push(CACHE_POINT);
  }
  return body;
}
