// What an Anthropic-shaped upstream must not be sent when a conversation is passed through: blocks
// Relay made from another vendor's answer (reasoning sealed in a thinking block's `relay1.`
// signature, a search in a `srvtoolu_relay1.` id). A conversation that began on OpenAI and fails
// over to Anthropic would otherwise send Anthropic a signature it refuses on every later turn.
import { holdsEnvelope } from '../../../core/plugin-api/canonical.ts';
import { sealedSignatureOrigin } from './reasoning-envelope.ts';
import { sealedSearchOrigin } from './web-search-blocks.ts';

type Block = Record<string, unknown>;
type Message = { role?: unknown; content?: unknown };

/** The x-relay-dropped name of a block another vendor than `upstream` made, or null. */
function foreignName(block: Block, upstream: string): string | null {
  const origin = block.type === 'thinking' && typeof block.signature === 'string' ? sealedSignatureOrigin(block.signature)
    : block.type === 'server_tool_use' && typeof block.id === 'string' ? sealedSearchOrigin(block.id)
      : block.type === 'web_search_tool_result' && typeof block.tool_use_id === 'string' ? sealedSearchOrigin(block.tool_use_id) : null;
  if (origin === null || origin === upstream) return null;
  return block.type === 'thinking' ? 'history.thinking' : 'history.web_search';
}

const isBlock = (value: unknown): value is Block => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The request without the blocks a vendor other than `upstream` (an adapter id) made, naming each
 * kind taken out in `dropped`; null when it has none (the body goes as received). An assistant turn
 * left empty goes, and the user turns around it become one. A tool loop whose last assistant turn
 * lost its thinking is continued without thinking: Anthropic requires that turn to open with it.
 */
export function withoutForeignBlocks(raw: Buffer | string, json: () => Record<string, unknown>, upstream: string, dropped: string[]): Record<string, unknown> | null {
  // A body without an envelope is forwarded as received.
  if (!holdsEnvelope(raw)) return null;
  const request = json();
  if (!Array.isArray(request.messages)) return null;
  const names = new Set<string>();
  // Assistant turns that opened with a thinking block and no longer do.
  const lostThinking = new Set<Message>();
  const messages: Message[] = [];
  for (const message of request.messages as Message[]) {
    if (!isBlock(message) || !Array.isArray(message.content)) {
      messages.push(message);
      continue;
    }
    const content = message.content.filter((block) => {
      const name = isBlock(block) ? foreignName(block, upstream) : null;
      if (name) names.add(name);
      return name === null;
    });
    if (content.length === message.content.length) {
      messages.push(message);
      continue;
    }
    if (content.length === 0) continue;
    const kept = { ...message, content };
    if (message.role === 'assistant' && isBlock(message.content[0]) && message.content[0].type === 'thinking' && content[0] !== message.content[0]) lostThinking.add(kept);
    messages.push(kept);
  }
  if (names.size === 0) return null;
  dropped.push(...names);
  const out: Record<string, unknown> = { ...request, messages: mergeUserTurns(messages) };
  const lastAssistant = messages.findLast((m) => m.role === 'assistant');
  if (lastAssistant && lostThinking.has(lastAssistant) && out.thinking !== undefined && continuesToolLoop(messages)) {
    delete out.thinking;
    dropped.push('thinking');
  }
  return out;
}

/** Whether the last turn answers the tool calls of the assistant turn before it. */
function continuesToolLoop(messages: Message[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'user' && Array.isArray(last.content) && last.content.some((b) => isBlock(b) && b.type === 'tool_result');
}

/** Consecutive user turns (an assistant turn between them went) become one. */
function mergeUserTurns(messages: Message[]): Message[] {
  const out: Message[] = [];
  for (const message of messages) {
    const previous = out.at(-1);
    if (previous?.role === 'user' && message.role === 'user') {
      out[out.length - 1] = { ...previous, content: [...asBlocks(previous.content), ...asBlocks(message.content)] };
    } else out.push(message);
  }
  return out;
}

function asBlocks(content: unknown): unknown[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
}
