// Prompt-cache breakpoints for a translated Messages request. Clients of other shapes (Codex, Chat
// SDKs) send no cache_control, and OpenAI caches their prefixes on its own; without breakpoints
// every turn of an agent loop on Claude pays the full input price for the whole conversation.
// Marked: the last tool (tools change least), the last system block, the last block of the last
// message (what the next turn reads), and the last block of the user message before it (what the
// previous turn wrote: found exactly, however many blocks a turn of parallel tool calls added,
// where Anthropic's lookback reaches 20). The four allowed.
const BREAKPOINT = { type: 'ephemeral' } as const;
/** Block types that may carry cache_control (thinking blocks and server-tool blocks may not). */
const MARKABLE = new Set(['text', 'image', 'document', 'tool_use', 'tool_result']);

type Block = Record<string, unknown>;

function markLast(blocks: unknown): void {
  if (!Array.isArray(blocks)) return;
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i] as Block;
    if (block && typeof block === 'object' && MARKABLE.has(String(block.type))) {
      block.cache_control = BREAKPOINT;
      return;
    }
  }
}

/** Adds the breakpoints to `body`, a Messages request Relay encoded (so it holds none of its own). */
export function withCacheBreakpoints(body: Block): Block {
  const tools = body.tools as Block[] | undefined;
  // A tool without a type is a client tool; web search (a server tool) may be marked too.
  if (Array.isArray(tools) && tools.length > 0) tools[tools.length - 1]!.cache_control = BREAKPOINT;
  markLast(body.system);
  const messages = body.messages as Array<{ role?: unknown; content: unknown }> | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return body;
  markLast(messages[messages.length - 1]!.content);
  const previousUser = messages.findLastIndex((m, i) => i < messages.length - 1 && m.role === 'user');
  if (previousUser >= 0) markLast(messages[previousUser]!.content);
  return body;
}
