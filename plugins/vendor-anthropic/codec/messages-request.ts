// Canonical request -> Anthropic Messages request (Relay speaking to the upstream).
import type { CanonicalRequest, ContentPart, DocumentPart, ImagePart, Tool, ToolChoice } from '../../../core/plugin-api/canonical.ts';
import type { Route } from '../../../core/plugin-api.ts';
import { toolInputObject, CUSTOM_INPUT_SCHEMA, asksReasoning, customToolDescription, unsupportedContent } from '../../../core/plugin-api/canonical.ts';
import { thinkingFor } from './thinking-budget.ts';
import { webSearchHistoryBlocks, webSearchToolBlock, withoutUnansweredSearches } from './web-search.ts';

/** Adapter-independent origin of reasoning that Anthropic made (see ReasoningPart.origin). */
export const ANTHROPIC_ORIGIN = 'anthropic';

/** What the Messages upstream encoder drops or changes, and why. Pinned by test/translation/conformance.test.ts. */
export const MESSAGES_UPSTREAM_DROPPED = {
  'reasoning from another origin, and thinking without a signature': 'Anthropic accepts only thinking it signed; named `reasoning` in x-relay-dropped',
  'reasoning.summary': 'mapped: with thinking on, Claude returns its (summarized) thinking',
  'temperature and top_p while thinking is on': 'Anthropic rejects sampling changes with extended thinking; named `temperature`, `top_p`',
  'top_p when temperature is set': 'newer Claude models accept only one of them; named `top_p`',
  'temperature above 1': 'clamped to 1, the Anthropic maximum; named `temperature`',
  'thinking when tool_choice forces a tool': 'Anthropic rejects forced tool use with extended thinking; named `reasoning`',
  'thinking when the assistant turn whose tool calls are answered has no signed thinking': 'Anthropic requires that turn to open with a thinking block; named `reasoning`',
  'reasoning, for a model the catalog marks reasoning: false': 'the model cannot reason (Codex asks for reasoning on every request); named `reasoning`',
  'stop sequences of whitespace only': 'Anthropic rejects them; named `stop`',
  'response_format json_schema name, description and strict': 'output_config.format carries only the schema (always enforced, so no effect on the answer); json_object is refused (400), not dropped',
  'image detail': 'no Anthropic field; named `image.detail` when low or high',
  'images and documents in system messages': 'refused (400): the system prompt carries text only',
  'images and documents in assistant messages': 'refused (400): Anthropic takes image and document blocks in user turns only',
  'refusal parts in history': 'sent as text',
  metadata: 'Anthropic metadata has only user_id (from canonical `user`); named `metadata` (no effect on the answer)',
  'position of system messages inside the conversation': 'appended to the top-level system prompt',
  'tool call ids outside [a-zA-Z0-9_-]': 'other characters become "_" (in tool_use and tool_result alike)',
  'custom tools': 'sent as a tool with one string parameter "input" (core/canonical/custom-tools.ts)',
  'web search': 'mapped to web_search_20250305 (max_uses, allowed/blocked domains, user location); search_context_size has no Anthropic field: named `tools.web_search.search_context_size`',
  'web searches of the history made by another vendor': 'Anthropic\'s own server_tool_use and web_search_tool_result blocks go back verbatim; another vendor\'s search cannot be replayed: named `history.web_search_call`',
  'a search left without its result, followed by more conversation': 'only the paused turn itself (the last message) can continue it, Anthropic refuses it elsewhere: left out, named `history.web_search_call`',
} as const;

type Block = Record<string, unknown>;

/** Anthropic tool ids must match ^[a-zA-Z0-9_-]+$. */
export function anthropicToolId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return clean === '' ? 'toolu_relay' : clean;
}

function image(part: ImagePart, dropped: string[]): Block {
  if (part.detail === 'low' || part.detail === 'high') dropped.push('image.detail');
  return {
    type: 'image',
    source: part.source.type === 'base64'
      ? { type: 'base64', media_type: part.source.media_type, data: part.source.data }
      : { type: 'url', url: part.source.url },
  };
}

/** A document block; a vendor file id names a file in another vendor's store, so it is refused. */
function documentBlock(part: DocumentPart, model: string): Block {
  const s = part.source;
  const title = part.filename === undefined ? {} : { title: part.filename };
  if (s.type === 'base64') return { type: 'document', source: { type: 'base64', media_type: s.media_type, data: s.data }, ...title };
  if (s.type === 'url') return { type: 'document', source: { type: 'url', url: s.url }, ...title };
  if (s.type === 'text') return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: s.text }, ...title };
  throw unsupportedContent(`the file \`${s.file_id}\``, model, 'a file id names a file in another vendor\'s store; send the file\'s bytes instead');
}


function block(part: ContentPart, model: string, dropped: string[]): Block | Block[] | null {
  switch (part.type) {
    case 'web_search_call':
      return webSearchHistoryBlocks(part, dropped);
    case 'document':
      return documentBlock(part, model);
    case 'text':
    case 'refusal':
      return part.text === '' ? null : { type: 'text', text: part.text };
    case 'image':
      return image(part, dropped);
    case 'tool_call':
      return { type: 'tool_use', id: anthropicToolId(part.id), name: part.name, input: toolInputObject(part.arguments, part.tool_kind) };
    case 'tool_result': {
      const content = part.content.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : image(p, dropped))).filter((b) => b.type !== 'text' || b.text !== '');
      return {
        type: 'tool_result', tool_use_id: anthropicToolId(part.tool_call_id),
        ...(content.length === 0 ? {} : { content }),
        ...(part.is_error === undefined ? {} : { is_error: part.is_error }),
      };
    }
    case 'reasoning':
      if (part.origin === ANTHROPIC_ORIGIN && part.signature) return { type: 'thinking', thinking: part.text ?? '', signature: part.signature };
      if (part.origin === ANTHROPIC_ORIGIN && part.encrypted !== undefined) return { type: 'redacted_thinking', data: part.encrypted };
      dropped.push('reasoning');
      return null;
  }
}

function encodeMessages(request: CanonicalRequest, dropped: string[]): { system: Block[]; messages: Array<{ role: 'user' | 'assistant'; content: Block[] }> } {
  const system: Block[] = (request.system ?? []).filter((p) => p.text !== '').map((p) => ({ type: 'text', text: p.text }));
  const messages: Array<{ role: 'user' | 'assistant'; content: Block[] }> = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      for (const part of message.content) {
        if (part.type === 'image' || part.type === 'document') throw unsupportedContent(`${part.type === 'image' ? 'an image' : 'a document'} in a system message`, request.model, 'the Anthropic system prompt carries text only');
        if (part.type === 'text' && part.text !== '') system.push({ type: 'text', text: part.text });
      }
      continue;
    }
    if (message.role === 'assistant') {
      const part = message.content.find((p) => p.type === 'image' || p.type === 'document');
      if (part) throw unsupportedContent(`${part.type === 'image' ? 'an image' : 'a document'} in an assistant message`, request.model, 'Anthropic takes images and documents in user turns only');
    }
    const blocks = message.content.flatMap<Block>((p) => block(p, request.model, dropped) ?? []);
    if (blocks.length === 0) continue;
    const last = messages[messages.length - 1];
    if (last && last.role === message.role) last.content.push(...blocks);
    else messages.push({ role: message.role, content: blocks });
  }
  withoutUnansweredSearches(messages, dropped);
  // tool_result blocks must open the user turn that answers the tool calls.
  for (const m of messages) {
    if (m.role === 'user') m.content = [...m.content.filter((b) => b.type === 'tool_result'), ...m.content.filter((b) => b.type !== 'tool_result')];
  }
  return { system, messages };
}

function encodeTool(tool: Tool, dropped: string[]): Block {
  if (tool.type === 'web_search') return webSearchToolBlock(tool, dropped);
  if (tool.type === 'custom') return { name: tool.name, description: customToolDescription(tool), input_schema: CUSTOM_INPUT_SCHEMA };
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
    ...(tool.strict === undefined ? {} : { strict: tool.strict }),
  };
}

function encodeToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Block | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...disable } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...disable };
  if (choice === 'required') return { type: 'any', ...disable };
  return { type: 'tool', name: choice.name, ...disable };
}

const forcesTool = (choice: ToolChoice | undefined): boolean => choice === 'required' || typeof choice === 'object';

/**
 * Anthropic requires the assistant turn whose tool calls the request answers to open with a
 * thinking block when thinking is on ("a final assistant message must start with a thinking
 * block"): a client that cannot carry Anthropic's signed thinking (Chat, or a conversation begun
 * on another vendor's model) would get a 400 on every turn of a tool loop.
 */
function continuesTurnWithoutThinking(messages: Array<{ role: 'user' | 'assistant'; content: Block[] }>): boolean {
  const last = messages.at(-1);
  const previous = messages.at(-2);
  if (last?.role !== 'user' || previous?.role !== 'assistant' || !last.content.some((b) => b.type === 'tool_result')) return false;
  const first = previous.content[0]?.type;
  return first !== 'thinking' && first !== 'redacted_thinking';
}

/**
 * A model the catalog marks `reasoning: false` never thinks, whatever the client asks (Codex sends
 * reasoning on every request; the pipeline already drops it: translation-source.ts).
 */
function wantsThinking(request: CanonicalRequest, route: Route): boolean {
  return request.reasoning !== undefined && route.model?.spec.reasoning !== false;
}

/** The sampling parameters not sent as they came: all of them with thinking, top_p beside temperature, temperature above 1. */
function droppedSampling(request: CanonicalRequest, thinking: boolean, dropped: string[]): void {
  if (request.temperature !== undefined && (thinking || request.temperature > 1)) dropped.push('temperature');
  if (request.top_p !== undefined && (thinking || request.temperature !== undefined)) dropped.push('top_p');
}

export function encodeMessagesRequest(request: CanonicalRequest, route: Route, dropped: string[] = []): unknown {
  const { system, messages } = encodeMessages(request, dropped);
  const hasTools = request.tools !== undefined && request.tools.length > 0;
  const thinkingOff = (hasTools && forcesTool(request.tool_choice)) || continuesTurnWithoutThinking(messages) || !wantsThinking(request, route);
  const { thinking, max_tokens } = thinkingFor(thinkingOff ? { ...request, reasoning: undefined } : request, route.model?.spec.maxOutputTokens);
  if (thinking === undefined && asksReasoning(request)) dropped.push('reasoning');
  const body: Record<string, unknown> = { model: route.upstreamModel, max_tokens, messages };
  if (system.length > 0) body.system = system;
  if (hasTools) {
    body.tools = request.tools!.map((tool) => encodeTool(tool, dropped));
    const choice = encodeToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (choice) body.tool_choice = choice;
  }
  // Anthropic refuses a stop sequence of whitespace only ("each stop sequence must contain non-whitespace").
  const stops = request.stop?.filter((stop) => stop.trim() !== '');
  if (stops && stops.length > 0) body.stop_sequences = stops;
  if (stops && stops.length < request.stop!.length) dropped.push('stop');
  if (thinking) body.thinking = thinking;
  else if (request.temperature !== undefined) body.temperature = Math.min(1, request.temperature);
  else if (request.top_p !== undefined) body.top_p = request.top_p;
  droppedSampling(request, thinking !== undefined, dropped);
  if (request.response_format?.type === 'json_schema') body.output_config = { format: { type: 'json_schema', schema: request.response_format.schema } };
  // An output constraint is never dropped: Anthropic has no bare JSON mode to map json_object to.
  if (request.response_format?.type === 'json_object') {
    throw unsupportedContent('response_format json_object', route.model?.metadata.slug ?? route.upstreamModel, 'Anthropic constrains output only by a JSON schema; send a json_schema format instead');
  }
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  if (request.metadata !== undefined) dropped.push('metadata');
  if (request.stream) body.stream = true;
  return body;
}
