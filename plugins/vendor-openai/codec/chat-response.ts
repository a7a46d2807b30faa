// OpenAI Chat Completions response JSON -> canonical response.
import type { CanonicalRequest } from '../../../core/plugin-api/canonical.ts';
import { RelayError, type Route } from '../../../core/plugin-api.ts';
import { emptyUsage, type CanonicalResponse, type Citation, type ContentPart, type StopReason } from '../../../core/plugin-api/canonical.ts';
import { customToolNames, toolArgumentsText, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { usageOfChatAnswer } from './usage.ts';
import { citationsOf, nameKind, TOOL_ARGUMENTS_NAME } from './answer-names.ts';
import { chatContentPieces, type ContentPiece } from './chat-content.ts';

const STOP_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filter',
};

export function stopReasonFromChat(reason: unknown, hasRefusal: boolean): StopReason {
  const mapped = typeof reason === 'string' ? STOP_REASONS[reason] ?? 'end_turn' : 'end_turn';
  return mapped === 'end_turn' && hasRefusal ? 'refusal' : mapped;
}

/** Reasoning text some OpenAI-compatible servers add (vLLM, DeepSeek: reasoning_content; Ollama, OpenRouter: reasoning). */
export function reasoningText(message: Record<string, unknown>): string | undefined {
  const value = message.reasoning_content ?? message.reasoning;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** What the Chat answer decoder drops or maps, and why. Pinned by test/translation/drop-names.test.ts. */
export const OPENAI_CHAT_RESPONSE_DROPPED = {
  'annotations of the message (a search model\'s url_citation)': 'url_citation mapped to citations of the text; other kinds named by their type',
  'audio in the message': 'named `audio`: canonical has no audio part',
  'annotations in streamed answers': 'url_citation mapped to citation deltas of the open text (without the text they cover); other kinds, or a citation with no text open, named',
  'audio in streamed answers': 'named `audio`',
  'content given as an array of parts (Mistral\'s Magistral models)': 'text parts mapped to text, thinking parts to reasoning; other kinds named by their type',
  'content parts in streamed answers': 'as in whole answers: text and thinking parts mapped, other kinds named by their type',
  'tool-call arguments that are not a string': 'an object sent as its JSON text; another value named `tool_call.arguments`',
  'tool-call arguments in streamed answers that are not a string': 'as in whole answers: an object sent as its JSON text, another value named',
  'custom tool-call input that is not a string': 'as tool-call arguments: an object sent as its JSON text, another value named `tool_call.arguments`',
} as const;

/** Chat's annotations (`{type, url_citation: {...}}`) as canonical citations of `text` (its span's text when known); other kinds are named. */
export function chatCitations(annotations: unknown, text: string | undefined, dropped: string[]): Citation[] {
  if (!Array.isArray(annotations)) return [];
  const flat = annotations.map((a) => {
    const v = (a ?? {}) as { type?: unknown; url_citation?: Record<string, unknown> };
    return v.type === 'url_citation' && v.url_citation !== null && typeof v.url_citation === 'object' ? { type: 'url_citation', ...v.url_citation } : a;
  });
  return citationsOf(flat, text, dropped);
}

/** The message's text and reasoning as canonical parts; the annotations are citations of its first text. */
function contentParts(pieces: ContentPiece[], annotations: unknown, dropped: string[]): ContentPart[] {
  let cited = false;
  return pieces.map((piece): ContentPart => {
    if (piece.kind === 'reasoning') return { type: 'reasoning', text: piece.text, origin: 'openai' };
    const citations = cited ? [] : chatCitations(annotations, piece.text, dropped);
    cited = true;
    return citations.length > 0 ? { type: 'text', text: piece.text, citations } : { type: 'text', text: piece.text };
  });
}

interface ChatToolCall { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown }; custom?: { name?: unknown; input?: unknown } }

export function decodeChatResponse(body: unknown, route: Route, request?: CanonicalRequest, dropped: string[] = []): CanonicalResponse {
  const json = (body ?? {}) as { id?: unknown; model?: unknown; choices?: unknown; usage?: unknown };
  const choice = Array.isArray(json.choices) ? (json.choices[0] as { message?: Record<string, unknown>; finish_reason?: unknown } | undefined) : undefined;
  if (!choice || choice.message === null || typeof choice.message !== 'object') {
    throw new RelayError('RELAY_ERR_UPSTREAM_BAD_RESPONSE', 'the upstream chat completion has no choices[0].message');
  }
  const message = choice.message;
  const custom = customToolNames(request);
  const content: ContentPart[] = [];
  const reasoning = reasoningText(message);
  if (reasoning !== undefined) content.push({ type: 'reasoning', text: reasoning, origin: 'openai' });
  content.push(...contentParts(chatContentPieces(message.content, dropped), message.annotations, dropped));
  if (message.audio !== undefined && message.audio !== null) nameKind('audio', dropped);
  if (typeof message.refusal === 'string' && message.refusal !== '') content.push({ type: 'refusal', text: message.refusal });
  for (const call of (Array.isArray(message.tool_calls) ? message.tool_calls : []) as ChatToolCall[]) {
    const id = typeof call.id === 'string' ? call.id : '';
    if (call.type === 'custom' && call.custom) {
      content.push({ type: 'tool_call', id, name: String(call.custom.name ?? ''), arguments: toolArgumentsText(call.custom.input, dropped, TOOL_ARGUMENTS_NAME), tool_kind: 'custom' });
    } else if (call.function) {
      const name = String(call.function.name ?? '');
      const args = toolArgumentsText(call.function.arguments, dropped, TOOL_ARGUMENTS_NAME);
      content.push(custom.has(name)
        ? { type: 'tool_call', id, name, arguments: unwrapCustomInput(args), tool_kind: 'custom' }
        : { type: 'tool_call', id, name, arguments: args, tool_kind: 'function' });
    }
  }
  return {
    id: typeof json.id === 'string' ? json.id : '',
    model: typeof json.model === 'string' ? json.model : route.upstreamModel,
    content,
    stop_reason: stopReasonFromChat(choice.finish_reason, content.some((p) => p.type === 'refusal')),
    usage: usageOfChatAnswer(json) ?? emptyUsage(),
  };
}
