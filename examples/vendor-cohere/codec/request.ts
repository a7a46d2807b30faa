// Canonical request -> Cohere v2 chat request (Relay speaking to the upstream).
import { CUSTOM_INPUT_SCHEMA, WEB_SEARCH_HISTORY_NAME, customToolDescription, functionTools } from 'relay-gateway/canonical';
import type { CanonicalRequest, ContentPart, CustomTool, FunctionTool, ImagePart } from 'relay-gateway/canonical';
import type { CohereContent, CohereMessage, CohereToolCall } from './wire.ts';

/** What the request encoder drops or changes, and why (tested in test/codec.test.ts). */
export const COHERE_REQUEST_DROPPED = {
  'reasoning history': 'Cohere does not take thinking back in the conversation',
  'reasoning effort': 'Cohere has thinking on or off, with a token budget: any effort but none is on',
  'reasoning summary': 'no Cohere field',
  'tool result errors': 'a tool message has no error flag: the text is sent as it is',
  'images in tool results': 'a tool message is text only',
  'named tool choice': 'Cohere has REQUIRED or NONE: a named tool is REQUIRED with only that tool offered',
  parallel_tool_calls: 'no Cohere field',
  'tool strict flag': 'strict_tools applies to every tool: it is set when every tool is strict',
  'response_format json_schema name, description and strict': 'json_object carries only the schema',
  'image detail': 'no Cohere field',
  'temperature above 1, top_p outside 0.01..0.99': "clamped to Cohere's ranges",
  metadata: 'no Cohere field',
  user: 'no Cohere field',
  'system prompt parts and the position of system messages': 'one system message, first, the parts joined by blank lines',
  'custom tools': 'sent as a function with one string parameter "input" (the plugin API\'s custom-tool helpers)',
  'web search (the tool and the searches of the history)': 'Cohere runs none; named `tools.web_search`, `history.web_search_call`',
} as const;

function imageUrl(part: ImagePart): string {
  return part.source.type === 'url' ? part.source.url : `data:${part.source.media_type};base64,${part.source.data}`;
}

function textOf(parts: ContentPart[]): string {
  return parts.filter((p) => p.type === 'text' || p.type === 'refusal').map((p) => (p as { text: string }).text).join('');
}

/** A user turn: plain text as a string, with images as a content array. */
function userMessage(parts: ContentPart[]): CohereMessage | null {
  const content: CohereContent[] = [];
  for (const p of parts) {
    if (p.type === 'text' && p.text !== '') content.push({ type: 'text', text: p.text });
    if (p.type === 'image') content.push({ type: 'image_url', image_url: { url: imageUrl(p) } });
  }
  if (content.length === 0) return null;
  return content.every((c) => c.type === 'text') ? { role: 'user', content: content.map((c) => (c as { text: string }).text).join('') } : { role: 'user', content };
}

function assistantMessage(parts: ContentPart[]): CohereMessage | null {
  const text = textOf(parts);
  const calls: CohereToolCall[] = parts.filter((p) => p.type === 'tool_call').map((p) => {
    const call = p as Extract<ContentPart, { type: 'tool_call' }>;
    const args = call.tool_kind === 'custom' ? JSON.stringify({ input: call.arguments }) : call.arguments || '{}';
    return { id: call.id, type: 'function', function: { name: call.name, arguments: args } };
  });
  if (text === '' && calls.length === 0) return null;
  return { role: 'assistant', ...(text === '' ? {} : { content: text }), ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

function encodeMessages(request: CanonicalRequest): CohereMessage[] {
  const system = [...(request.system ?? []).map((p) => p.text), ...request.messages.filter((m) => m.role === 'system').map((m) => textOf(m.content))].filter((s) => s !== '');
  const out: CohereMessage[] = system.length > 0 ? [{ role: 'system', content: system.join('\n\n') }] : [];
  for (const message of request.messages) {
    if (message.role === 'system') continue;
    if (message.role === 'assistant') {
      const encoded = assistantMessage(message.content);
      if (encoded) out.push(encoded);
      continue;
    }
    // Tool results become tool messages, before the rest of the user turn.
    for (const p of message.content) {
      if (p.type === 'tool_result') out.push({ role: 'tool', tool_call_id: p.tool_call_id, content: textOf(p.content as ContentPart[]) });
    }
    const user = userMessage(message.content);
    if (user) out.push(user);
  }
  return out;
}

function encodeTool(tool: FunctionTool | CustomTool): Record<string, unknown> {
  if (tool.type === 'custom') return { type: 'function', function: { name: tool.name, description: customToolDescription(tool), parameters: { ...CUSTOM_INPUT_SCHEMA } } };
  return {
    type: 'function',
    function: { name: tool.name, ...(tool.description === undefined ? {} : { description: tool.description }), parameters: tool.parameters ?? { type: 'object', properties: {} } },
  };
}

function encodeThinking(request: CanonicalRequest): Record<string, unknown> | undefined {
  const r = request.reasoning;
  if (!r || (r.effort === undefined && r.budget_tokens === undefined)) return undefined;
  if (r.effort === 'none' || r.budget_tokens === 0) return { type: 'disabled' };
  return { type: 'enabled', ...(r.budget_tokens === undefined ? {} : { token_budget: r.budget_tokens }) };
}

export function encodeCohereRequest(request: CanonicalRequest, dropped: string[] = []): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: encodeMessages(request) };
  // Cohere runs no web search of its own: the tool is named in x-relay-dropped.
  let tools = functionTools(request.tools, dropped);
  if (request.messages.some((m) => m.content.some((p) => p.type === 'web_search_call'))) dropped.push(WEB_SEARCH_HISTORY_NAME);
  const choice = request.tool_choice;
  if (tools.length > 0 && choice !== undefined && choice !== 'auto') {
    if (choice === 'none') body.tool_choice = 'NONE';
    else {
      body.tool_choice = 'REQUIRED';
      if (typeof choice === 'object') tools = tools.filter((t) => t.name === choice.name);
    }
  }
  if (tools.length > 0) {
    body.tools = tools.map(encodeTool);
    if (tools.every((t) => t.type === 'function' && t.strict === true)) body.strict_tools = true;
  }
  if (request.max_output_tokens !== undefined) body.max_tokens = request.max_output_tokens;
  if (request.temperature !== undefined) body.temperature = Math.min(request.temperature, 1);
  if (request.top_p !== undefined) body.p = Math.min(Math.max(request.top_p, 0.01), 0.99);
  if (request.stop && request.stop.length > 0) body.stop_sequences = request.stop;
  const format = request.response_format;
  if (format?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') body.response_format = { type: 'json_object', json_schema: format.schema };
  const thinking = encodeThinking(request);
  if (thinking) body.thinking = thinking;
  if (request.stream) body.stream = true;
  return body;
}
