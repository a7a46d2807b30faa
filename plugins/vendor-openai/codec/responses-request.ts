// Canonical request -> OpenAI Responses request (Relay speaking to the upstream).
// Stateless: store is false and encrypted reasoning is asked for, so a multi-turn
// conversation carries its own reasoning items.
import type { CanonicalRequest, ContentPart, DocumentPart, ImagePart, Tool, ToolChoice, ToolResultPart } from '../../../core/plugin-api/canonical.ts';
import type { Route } from '../../../core/plugin-api.ts';
import { markedToolResultContent, unsupportedContent, unsupportedParameter } from '../../../core/plugin-api/canonical.ts';
import { imageUrl } from './chat-request.ts';
import { openaiEffort } from './reasoning-effort.ts';
import { WEB_SEARCH_SOURCES, webSearchHistoryItem, webSearchTool } from './web-search.ts';

/** Adapter-independent origin of reasoning that OpenAI made (see ReasoningPart.origin). */
export const OPENAI_ORIGIN = 'openai';

/** What the Responses upstream encoder drops, and why. Pinned by test/translation/conformance.test.ts. */
export const RESPONSES_UPSTREAM_DROPPED = {
  stop: 'refused (400): the Responses API has no stop sequences, and ignoring them changes the answer',
  'reasoning from another origin (signed or encrypted by another vendor)': 'only OpenAI can read OpenAI reasoning items; named `reasoning` in x-relay-dropped',
  'reasoning.budget_tokens': 'mapped to an effort',
  'is_error of tool results': 'mapped: the output text starts with "Error: " (tool outputs have no error flag)',
  'max_output_tokens below 16': 'raised to 16, the API minimum; named `max_output_tokens`',
  'images in assistant messages': 'refused (400): assistant items carry text only (images in system messages go in a developer message)',
  'documents in assistant messages': 'refused (400): input_file is user input only, and moving it to a user message would change who said it',
  'refusal parts in history': 'sent as assistant text',
  'web search': 'mapped to the web_search tool (allowed domains, user location, search_context_size; sources included); max_uses and blocked_domains have no field: named `tools.web_search.max_uses`, `tools.web_search.blocked_domains`; a tool_choice forcing the search has no Responses form: named `tool_choice` (the model chooses)',
  'web searches of the history made by another vendor': 'OpenAI\'s own web_search_call items go back verbatim; another vendor\'s search cannot be replayed: named `history.web_search_call`',
} as const;

function image(part: ImagePart): Record<string, unknown> {
  return { type: 'input_image', image_url: imageUrl(part), detail: part.detail ?? 'auto' };
}

/** An `input_file` item part: bytes as a data URL, a URL OpenAI fetches, or an OpenAI file id; text documents go as text. */
function inputFile(part: DocumentPart): Record<string, unknown> {
  const s = part.source;
  const filename = part.filename === undefined ? {} : { filename: part.filename };
  if (s.type === 'text') return { type: 'input_text', text: s.text };
  if (s.type === 'file_id') return { type: 'input_file', file_id: s.file_id };
  if (s.type === 'base64') return { type: 'input_file', file_data: `data:${s.media_type};base64,${s.data}`, ...filename };
  if (s.url.startsWith('data:')) return { type: 'input_file', file_data: s.url, ...filename };
  return { type: 'input_file', file_url: s.url };
}

function toolOutput(result: ToolResultPart): string | unknown[] {
  const content = markedToolResultContent(result);
  if (content.every((p) => p.type === 'text')) return content.map((p) => (p as { text: string }).text).join('\n\n');
  return content.map((p) => (p.type === 'text' ? { type: 'input_text', text: p.text } : image(p)));
}

function reasoningItem(part: Extract<ContentPart, { type: 'reasoning' }>): Record<string, unknown> | null {
  if (part.origin !== OPENAI_ORIGIN || part.encrypted === undefined) return null;
  return {
    type: 'reasoning',
    ...(part.id === undefined ? {} : { id: part.id }),
    summary: part.text ? [{ type: 'summary_text', text: part.text }] : [],
    encrypted_content: part.encrypted,
  };
}

function encodeInput(request: CanonicalRequest, dropped: string[]): unknown[] {
  const items: unknown[] = [];
  const callKinds = new Map<string, 'function' | 'custom'>();
  // More than one system part cannot be one `instructions` string without losing the split.
  if (request.system && request.system.length > 1) {
    items.push({ type: 'message', role: 'developer', content: request.system.map((p) => ({ type: 'input_text', text: p.text })) });
  }
  const flush = (role: 'user' | 'assistant' | 'developer', content: unknown[]): void => {
    if (content.length > 0) items.push({ type: 'message', role, content: content.splice(0) });
  };
  for (const message of request.messages) {
    const content: unknown[] = [];
    const role = message.role === 'system' ? 'developer' : message.role;
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
        case 'refusal':
          // Assistant history as plain-string messages: what both the API and its published schema accept.
          if (role === 'assistant') items.push({ type: 'message', role: 'assistant', content: part.text });
          else if (part.type === 'text') content.push({ type: 'input_text', text: part.text });
          break;
        case 'image':
          // A developer message takes input images; an assistant item carries text only.
          if (role === 'assistant') throw unsupportedContent('an image in an assistant message', request.model, 'Responses assistant items carry text only');
          content.push(image(part));
          break;
        case 'document':
          if (role === 'assistant') throw unsupportedContent('a document in an assistant message', request.model, 'Responses takes input_file in user input only');
          content.push(inputFile(part));
          break;
        case 'tool_call': {
          flush(role, content);
          const custom = part.tool_kind === 'custom';
          callKinds.set(part.id, custom ? 'custom' : 'function');
          items.push(custom
            ? { type: 'custom_tool_call', call_id: part.id, name: part.name, input: part.arguments }
            : { type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments === '' ? '{}' : part.arguments });
          break;
        }
        case 'tool_result':
          flush(role, content);
          items.push({
            type: callKinds.get(part.tool_call_id) === 'custom' ? 'custom_tool_call_output' : 'function_call_output',
            call_id: part.tool_call_id,
            output: toolOutput(part),
          });
          break;
        case 'web_search_call': {
          flush(role, content);
          const item = webSearchHistoryItem(part, dropped);
          if (item) items.push(item);
          break;
        }
        case 'reasoning': {
          flush(role, content);
          const item = reasoningItem(part);
          if (item) items.push(item);
          else dropped.push('reasoning');
          break;
        }
      }
    }
    flush(role, content);
  }
  return items;
}

function encodeTool(tool: Tool, dropped: string[]): unknown {
  if (tool.type === 'web_search') return webSearchTool(tool, dropped);
  if (tool.type === 'custom') {
    return {
      type: 'custom', name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(tool.format === undefined ? {} : { format: tool.format }),
    };
  }
  return {
    type: 'function', name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    parameters: tool.parameters ?? { type: 'object', properties: {} },
    strict: tool.strict ?? false,
  };
}

function encodeToolChoice(choice: ToolChoice, tools: Tool[], dropped: string[]): unknown {
  if (typeof choice === 'string') return choice;
  // Anthropic's forced web_search has no Responses tool_choice (only web_search_preview has one): the model chooses.
  if (!tools.some((t) => t.type !== 'web_search' && t.name === choice.name) && tools.some((t) => t.type === 'web_search')) {
    dropped.push('tool_choice');
    return 'auto';
  }
  const custom = tools.some((t) => t.type === 'custom' && t.name === choice.name);
  return { type: custom ? 'custom' : 'function', name: choice.name };
}

export function encodeResponsesRequest(request: CanonicalRequest, route: Route, dropped: string[] = []): unknown {
  if (request.stop !== undefined && request.stop.length > 0) {
    throw unsupportedParameter('stop', request.model, 'the Responses API has no stop sequences');
  }
  const body: Record<string, unknown> = { model: route.upstreamModel, input: encodeInput(request, dropped), store: false };
  if (request.system && request.system.length === 1) body.instructions = request.system[0].text;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => encodeTool(tool, dropped));
    if (request.tool_choice !== undefined) body.tool_choice = encodeToolChoice(request.tool_choice, request.tools, dropped);
  }
  if (request.parallel_tool_calls !== undefined) body.parallel_tool_calls = request.parallel_tool_calls;
  if (request.max_output_tokens !== undefined) {
    body.max_output_tokens = Math.max(16, request.max_output_tokens);
    if (request.max_output_tokens < 16) dropped.push('max_output_tokens');
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  const effort = openaiEffort(request.reasoning);
  if (request.reasoning) {
    body.reasoning = { ...(effort === undefined ? {} : { effort }), ...(request.reasoning.summary ? { summary: 'auto' } : {}) };
    body.include = ['reasoning.encrypted_content'];
  }
  if (request.tools?.some((t) => t.type === 'web_search')) body.include = [...(body.include as string[] | undefined ?? []), WEB_SEARCH_SOURCES];
  const format = request.response_format;
  if (format) {
    body.text = {
      format: format.type === 'json_schema'
        ? {
          type: 'json_schema', name: format.name, schema: format.schema,
          ...(format.strict === undefined ? {} : { strict: format.strict }),
          ...(format.description === undefined ? {} : { description: format.description }),
        }
        : { type: format.type },
    };
  }
  if (request.stream) body.stream = true;
  if (request.metadata) body.metadata = request.metadata;
  if (request.user !== undefined) body.user = request.user;
  return body;
}

