// Canonical request -> OpenAI Chat Completions request (Relay speaking to the upstream).
import type { CanonicalRequest, ContentPart, CustomTool, DocumentPart, FunctionTool, ImagePart, Message, ToolChoice } from '../../../core/plugin-api/canonical.ts';
import type { Route } from '../../../core/plugin-api.ts';
import { CUSTOM_INPUT_SCHEMA, WEB_SEARCH_HISTORY_NAME, customToolDescription, functionTools, markedToolResultContent, unsupportedContent, wrapCustomInput } from '../../../core/plugin-api/canonical.ts';
import { openaiEffort } from './reasoning-effort.ts';

/** What the Chat upstream encoder drops, and why. Pinned by test/translation/conformance.test.ts. */
export const CHAT_UPSTREAM_DROPPED = {
  'reasoning parts (incl. signed or encrypted reasoning)': 'Chat Completions takes no reasoning input; named `reasoning` in x-relay-dropped',
  'reasoning.summary': 'Chat Completions returns no reasoning summary; named `reasoning.summary`',
  'reasoning.budget_tokens': 'mapped to an effort (only reasoning_effort exists)',
  'images and documents in assistant and system messages': 'refused (400): those messages carry text only (images in tool results are sent in a user message after the tool messages)',
  'is_error of tool results': 'mapped: the tool message\'s text starts with "Error: " (tool messages have no error flag)',
  metadata: 'only stored completions take metadata; OpenAI-compatible servers reject it; named `metadata` (no effect on the answer)',
  'custom tools': 'sent as a function with one string parameter "input" (core/canonical/custom-tools.ts)',
  'web search (the tool and the searches of the history)': 'Relay speaks to Chat hosts without web_search_options (most have none); named `tools.web_search`, `history.web_search_call`',
} as const;

export function imageUrl(image: ImagePart): string {
  return image.source.type === 'url' ? image.source.url : `data:${image.source.media_type};base64,${image.source.data}`;
}

/** A Chat `file` part (bytes as a data URL, or an OpenAI file id); text documents go as text. */
function filePart(part: DocumentPart, model: string): Record<string, unknown> {
  const s = part.source;
  const filename = part.filename === undefined ? {} : { filename: part.filename };
  if (s.type === 'text') return { type: 'text', text: s.text };
  if (s.type === 'file_id') return { type: 'file', file: { file_id: s.file_id } };
  if (s.type === 'base64') return { type: 'file', file: { file_data: `data:${s.media_type};base64,${s.data}`, ...filename } };
  if (s.url.startsWith('data:')) return { type: 'file', file: { file_data: s.url, ...filename } };
  throw unsupportedContent('a document URL', model, 'Chat Completions does not fetch files; send the file\'s bytes instead');
}

function textContent(parts: ContentPart[]): string | Array<{ type: 'text'; text: string }> {
  const texts = parts.filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text');
  if (texts.length === 1) return texts[0].text;
  if (texts.length === 0) return '';
  return texts.map((t) => ({ type: 'text' as const, text: t.text }));
}

function userMessages(message: Message, model: string): unknown[] {
  const out: unknown[] = [];
  const rest: ContentPart[] = [];
  for (const part of message.content) {
    if (part.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: part.tool_call_id, content: textContent(markedToolResultContent(part)) });
      // A tool message carries text only: its images follow in the user message after the tool messages.
      const images = part.content.filter((p) => p.type === 'image');
      if (images.length > 0) rest.push({ type: 'text', text: `The result of tool call ${part.tool_call_id} included ${images.length === 1 ? 'this image' : 'these images'}:` }, ...images);
    } else if (part.type === 'text' || part.type === 'image' || part.type === 'document') rest.push(part);
  }
  if (rest.length === 1 && rest[0].type === 'text') out.push({ role: 'user', content: rest[0].text });
  else if (rest.length > 0) {
    out.push({
      role: 'user',
      content: rest.map((p) => p.type === 'text' ? { type: 'text', text: p.text }
        : p.type === 'document' ? filePart(p, model)
          : { type: 'image_url', image_url: { url: imageUrl(p as ImagePart), ...((p as ImagePart).detail ? { detail: (p as ImagePart).detail } : {}) } }),
    });
  }
  return out;
}

/** Chat system and assistant messages carry text only: an image or a document there is refused. */
function textOnly(message: Message, model: string): void {
  const part = message.content.find((p) => p.type === 'image' || p.type === 'document');
  if (part) throw unsupportedContent(`${part.type === 'image' ? 'an image' : 'a document'} in ${message.role === 'system' ? 'a system' : 'an assistant'} message`, model, `Chat Completions ${message.role} messages carry text only`);
}

function assistantMessage(message: Message, dropped: string[]): unknown | null {
  const texts: string[] = [];
  const refusals: string[] = [];
  const toolCalls: unknown[] = [];
  for (const part of message.content) {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'reasoning') dropped.push('reasoning');
    else if (part.type === 'web_search_call') dropped.push(WEB_SEARCH_HISTORY_NAME);
    else if (part.type === 'refusal') refusals.push(part.text);
    else if (part.type === 'tool_call') {
      const args = part.tool_kind === 'custom' ? wrapCustomInput(part.arguments) : part.arguments === '' ? '{}' : part.arguments;
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: args } });
    }
  }
  if (texts.length === 0 && refusals.length === 0 && toolCalls.length === 0) return null;
  const out: Record<string, unknown> = {
    role: 'assistant',
    content: texts.length === 0 ? null : texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text', text })),
  };
  if (refusals.length > 0) out.refusal = refusals.join('\n\n');
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  return out;
}

function encodeMessages(request: CanonicalRequest, dropped: string[]): unknown[] {
  const out: unknown[] = [];
  if (request.system && request.system.length > 0) out.push({ role: 'system', content: textContent(request.system) });
  for (const message of request.messages) {
    if (message.role !== 'user') textOnly(message, request.model);
    if (message.role === 'system') {
      const content = textContent(message.content);
      if (content !== '') out.push({ role: 'system', content });
    } else if (message.role === 'user') out.push(...userMessages(message, request.model));
    else {
      const m = assistantMessage(message, dropped);
      if (m) out.push(m);
    }
  }
  return out;
}

function encodeTool(tool: FunctionTool | CustomTool): unknown {
  if (tool.type === 'custom') {
    return { type: 'function', function: { name: tool.name, description: customToolDescription(tool), parameters: CUSTOM_INPUT_SCHEMA } };
  }
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      ...(tool.parameters === undefined ? {} : { parameters: tool.parameters }),
      ...(tool.strict === undefined ? {} : { strict: tool.strict }),
    },
  };
}

function encodeToolChoice(choice: ToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

export function encodeChatRequest(request: CanonicalRequest, route: Route, dropped: string[] = []): unknown {
  const body: Record<string, unknown> = { model: route.upstreamModel, messages: encodeMessages(request, dropped) };
  const tools = functionTools(request.tools, dropped);
  if (tools.length > 0) {
    body.tools = tools.map(encodeTool);
    if (request.tool_choice !== undefined) body.tool_choice = encodeToolChoice(request.tool_choice);
    if (request.parallel_tool_calls !== undefined) body.parallel_tool_calls = request.parallel_tool_calls;
  }
  if (request.max_output_tokens !== undefined) body.max_completion_tokens = request.max_output_tokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.stop && request.stop.length > 0) body.stop = request.stop;
  const effort = openaiEffort(request.reasoning);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (request.reasoning?.summary) dropped.push('reasoning.summary');
  if (request.metadata !== undefined) dropped.push('metadata');
  const format = request.response_format;
  if (format) {
    body.response_format = format.type === 'json_schema'
      ? {
        type: 'json_schema',
        json_schema: {
          name: format.name, schema: format.schema,
          ...(format.strict === undefined ? {} : { strict: format.strict }),
          ...(format.description === undefined ? {} : { description: format.description }),
        },
      }
      : { type: format.type };
  }
  if (request.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (request.user !== undefined) body.user = request.user;
  return body;
}
