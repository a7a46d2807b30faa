// Canonical request -> Bedrock Converse request (Relay speaking to the upstream). The model is
// not in the body: it is part of the URL (see adapter.ts).
import type { Route } from '../../../core/plugin-api.ts';
import {
  toolInputObject, CUSTOM_INPUT_SCHEMA, WEB_SEARCH_HISTORY_NAME, asksReasoning, customToolDescription, functionTools, unsupportedContent,
  type CanonicalRequest, type ContentPart, type CustomTool, type DocumentPart, type FunctionTool, type ImagePart,
} from '../../../core/plugin-api/canonical.ts';
import { isClaudeModel, thinkingFor } from './thinking.ts';
import type { ConverseBlock, ConverseImage, ConverseMessage, ImageFormat } from './wire.ts';

/** Origin of reasoning that a model on Bedrock produced (see ReasoningPart.origin). */
export const BEDROCK_ORIGIN = 'bedrock';

/** What the Converse encoder drops or changes, and why. Pinned by test/translation/conformance.test.ts. */
export const CONVERSE_REQUEST_DROPPED = {
  'reasoning from another origin, and reasoning text without a signature': 'Bedrock accepts back only reasoning its model signed; named `reasoning` in x-relay-dropped',
  'reasoning for a model other than Claude': 'Converse has no common reasoning field (Claude\'s thinking goes in additionalModelRequestFields); named `reasoning`',
  'reasoning.summary': 'mapped: with thinking on, Claude returns its (summarized) thinking',
  'temperature and top_p while thinking is on': 'Claude rejects sampling changes with extended thinking; named `temperature`, `top_p`',
  'top_p when temperature is set': 'newer Claude models accept only one of them; named `top_p`',
  'temperature above 1': 'clamped to 1, the Converse maximum; named `temperature`',
  'thinking when tool_choice forces a tool': 'Claude rejects forced tool use with extended thinking; named `reasoning`',
  'thinking when the assistant turn whose tool calls are answered has no signed thinking': 'Claude requires that turn to open with a thinking block; named `reasoning`',
  'tool_choice none': 'mapped by sending no tools; when the history holds tool blocks (Converse then needs the tools) the tools stay, the model chooses, and `tool_choice` is named',
  parallel_tool_calls: 'no Converse field (Claude may call tools in parallel); false is named `parallel_tool_calls`',
  'stop sequences of whitespace only': 'Claude refuses them; named `stop`',
  'response_format json_schema strict': 'outputConfig.textFormat carries a JSON schema (name and description kept; always enforced, so no effect on the answer); json_object is refused (400), not dropped',
  'image detail': 'no Converse field; named `image.detail` when low or high',
  'image URLs other than data: and s3://': 'refused (400): Converse takes image bytes or an S3 location only',
  'images and documents in system messages': 'refused (400): the system prompt carries text only',
  'images and documents in assistant messages': 'refused (400): Converse takes images and documents only in user messages',
  'user and metadata': 'sent as requestMetadata (user as its `user` entry): Bedrock logs them, the model does not see them',
  'refusal parts in history': 'sent as text',
  'position of system messages inside the conversation': 'appended to the top-level system prompt',
  'tool call ids outside [a-zA-Z0-9_-]': 'other characters become "_" (in toolUse and toolResult alike)',
  'custom tools': 'sent as a tool with one string parameter "input" (core/canonical/custom-tools.ts)',
  'web search (the tool and the searches of the history)': 'Converse has no web search; named `tools.web_search`, `history.web_search_call`',
} as const;

const FORMATS: Record<string, ImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const EXTENSIONS: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', gif: 'gif', webp: 'webp' };

/** Converse tool ids must match ^[a-zA-Z0-9_-]+$. */
export function converseToolId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return clean === '' ? 'tooluse_relay' : clean;
}

function image(part: ImagePart, model: string, dropped: string[]): ConverseBlock {
  const { source } = part;
  if (part.detail === 'low' || part.detail === 'high') dropped.push('image.detail');
  if (source.type === 'base64') return { image: { format: FORMATS[source.media_type] ?? 'png', source: { bytes: source.data } } };
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(source.url);
  if (data) return { image: { format: FORMATS[data[1]] ?? 'png', source: { bytes: data[2] } } };
  if (source.url.startsWith('s3://')) {
    const ext = /\.([a-z0-9]+)$/i.exec(source.url)?.[1]?.toLowerCase() ?? '';
    return { image: { format: EXTENSIONS[ext] ?? 'png', source: { s3Location: { uri: source.url } } } };
  }
  throw unsupportedContent('an image URL', model, 'Converse takes image bytes or an s3:// location, not a URL it would fetch; send the image\'s bytes instead');
}

const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf', 'text/plain': 'txt', 'text/markdown': 'md', 'text/html': 'html', 'text/csv': 'csv',
  'application/msword': 'doc', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

/** Converse document names allow letters, digits, single spaces, hyphens, parentheses and brackets only. */
function documentName(filename: string | undefined): string {
  const clean = (filename ?? '').replace(/\.[A-Za-z0-9]+$/, '').replace(/[^A-Za-z0-9\s()[\]-]/g, '-').replace(/\s+/g, ' ').trim();
  return clean === '' ? 'document' : clean.slice(0, 200);
}

/** A document block (bytes or an S3 location); other URLs and vendor file ids are refused. */
function documentBlock(part: DocumentPart, model: string): ConverseBlock {
  const s = part.source;
  const name = documentName(part.filename);
  const refuse = (what: string, why: string) => unsupportedContent(what, model, why);
  if (s.type === 'text') return { document: { format: 'txt', name, source: { bytes: Buffer.from(s.text, 'utf8').toString('base64') } } };
  if (s.type === 'file_id') throw refuse(`the file \`${s.file_id}\``, 'a file id names a file in another vendor\'s store; send the file\'s bytes instead');
  const dataUrl = s.type === 'url' ? /^data:([^;,]+);base64,(.*)$/s.exec(s.url) : null;
  const data = s.type === 'base64' ? { mediaType: s.media_type, bytes: s.data } : dataUrl ? { mediaType: dataUrl[1], bytes: dataUrl[2] } : null;
  if (data) {
    const format = DOCUMENT_FORMATS[data.mediaType];
    if (!format) throw refuse(`a document of type ${data.mediaType}`, 'Converse takes pdf, txt, md, html, csv, doc, docx, xls and xlsx documents');
    return { document: { format, name, source: { bytes: data.bytes } } };
  }
  if (s.type === 'url' && s.url.startsWith('s3://')) {
    const ext = /\.([a-z0-9]+)$/i.exec(s.url)?.[1]?.toLowerCase() ?? 'pdf';
    return { document: { format: ext, name, source: { s3Location: { uri: s.url } } } };
  }
  throw refuse('a document URL', 'Converse takes document bytes or an s3:// location, not a URL it would fetch');
}


function block(part: ContentPart, model: string, dropped: string[]): ConverseBlock | null {
  switch (part.type) {
    case 'document':
      return documentBlock(part, model);
    case 'text':
    case 'refusal':
      return part.text === '' ? null : { text: part.text };
    case 'image':
      return image(part, model, dropped);
    case 'tool_call':
      return { toolUse: { toolUseId: converseToolId(part.id), name: part.name, input: toolInputObject(part.arguments, part.tool_kind) } };
    case 'tool_result':
      return {
        toolResult: {
          toolUseId: converseToolId(part.tool_call_id),
          content: part.content.filter((p) => p.type !== 'text' || p.text !== '').map((p) => (p.type === 'text' ? { text: p.text } : image(p, model, dropped) as { image: ConverseImage })),
          ...(part.is_error === undefined ? {} : { status: part.is_error ? 'error' : 'success' }),
        },
      };
    case 'reasoning':
      if (part.origin === BEDROCK_ORIGIN && part.signature) return { reasoningContent: { reasoningText: { text: part.text ?? '', signature: part.signature } } };
      if (part.origin === BEDROCK_ORIGIN && part.encrypted !== undefined) return { reasoningContent: { redactedContent: part.encrypted } };
      dropped.push('reasoning');
      return null;
    case 'web_search_call':
      dropped.push(WEB_SEARCH_HISTORY_NAME);
      return null;
  }
}

function encodeMessages(request: CanonicalRequest, dropped: string[]): { system: Array<{ text: string }>; messages: ConverseMessage[] } {
  const system = (request.system ?? []).filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  const messages: ConverseMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      for (const part of message.content) {
        if (part.type === 'image' || part.type === 'document') throw unsupportedContent(`${part.type === 'image' ? 'an image' : 'a document'} in a system message`, request.model, 'the Converse system prompt carries text only');
        if (part.type === 'text' && part.text !== '') system.push({ text: part.text });
      }
      continue;
    }
    if (message.role === 'assistant') {
      const part = message.content.find((p) => p.type === 'image' || p.type === 'document');
      if (part) throw unsupportedContent(`${part.type === 'image' ? 'an image' : 'a document'} in an assistant message`, request.model, 'Converse takes images and documents only in user messages');
    }
    const blocks = message.content.map((p) => block(p, request.model, dropped)).filter((b): b is ConverseBlock => b !== null);
    if (blocks.length === 0) continue;
    const last = messages.at(-1);
    if (last && last.role === message.role) last.content.push(...blocks);
    else messages.push({ role: message.role, content: blocks });
  }
  // Tool results must open the user turn that answers the tool calls (Claude requires it).
  for (const m of messages) {
    if (m.role === 'user') m.content = [...m.content.filter((b) => b.toolResult), ...m.content.filter((b) => !b.toolResult)];
  }
  return { system, messages };
}

function toolSpec(tool: FunctionTool | CustomTool): Record<string, unknown> {
  if (tool.type === 'custom') return { toolSpec: { name: tool.name, description: customToolDescription(tool), inputSchema: { json: CUSTOM_INPUT_SCHEMA } } };
  return {
    toolSpec: {
      name: tool.name,
      ...(tool.description === undefined || tool.description === '' ? {} : { description: tool.description }),
      inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } },
      ...(tool.strict === undefined ? {} : { strict: tool.strict }),
    },
  };
}

function toolChoice(choice: CanonicalRequest['tool_choice']): Record<string, unknown> | undefined {
  if (choice === undefined || choice === 'none') return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  return { tool: { name: choice.name } };
}

const forcesTool = (choice: CanonicalRequest['tool_choice']): boolean => choice === 'required' || typeof choice === 'object';

/**
 * With thinking on, Claude requires the assistant turn whose tool calls the request answers to
 * open with its signed thinking: a client that cannot carry it (Chat, or a conversation begun on
 * another vendor) would get a 400 on every turn of a tool loop, so thinking is off for that turn.
 */
function continuesTurnWithoutThinking(messages: ConverseMessage[]): boolean {
  const last = messages.at(-1);
  const previous = messages.at(-2);
  if (last?.role !== 'user' || previous?.role !== 'assistant' || !last.content.some((b) => b.toolResult)) return false;
  return !previous.content[0]?.reasoningContent;
}

const holdsToolBlocks = (messages: ConverseMessage[]): boolean => messages.some((m) => m.content.some((b) => b.toolUse || b.toolResult));

export function encodeConverseRequest(request: CanonicalRequest, route: Route, dropped: string[] = []): Record<string, unknown> {
  const { system, messages } = encodeMessages(request, dropped);
  const body: Record<string, unknown> = { messages };
  if (system.length > 0) body.system = system;
  const tools = functionTools(request.tools, dropped);
  const hasTools = tools.length > 0;
  const claude = isClaudeModel(route.upstreamModel);
  const thinkingAllowed = claude && !(hasTools && forcesTool(request.tool_choice)) && !continuesTurnWithoutThinking(messages);
  const reasoning = thinkingAllowed ? request.reasoning : undefined;
  const { thinking, maxTokens } = thinkingFor({ ...request, reasoning }, route.model?.spec.maxOutputTokens, route.model?.spec.reasoning === true);
  if (!thinking && asksReasoning(request)) dropped.push('reasoning');
  const inference: Record<string, unknown> = {};
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (!thinking) {
    if (request.temperature !== undefined) inference.temperature = Math.min(request.temperature, 1);
    else if (request.top_p !== undefined) inference.topP = request.top_p;
  }
  if (request.temperature !== undefined && (thinking || request.temperature > 1)) dropped.push('temperature');
  if (request.top_p !== undefined && (thinking || request.temperature !== undefined)) dropped.push('top_p');
  const stops = request.stop?.filter((s) => s.trim() !== '');
  if (stops && stops.length < request.stop!.length) dropped.push('stop');
  if (stops && stops.length > 0) inference.stopSequences = stops;
  // Claude says which stop sequence matched only when asked for the field.
  if (stops && stops.length > 0 && claude) body.additionalModelResponseFieldPaths = ['/stop_sequence'];
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  // tool_choice none is no tools, unless the history's tool blocks need them declared.
  const noTools = request.tool_choice === 'none' && !holdsToolBlocks(messages);
  if (hasTools && !noTools) {
    const choice = toolChoice(request.tool_choice);
    body.toolConfig = { tools: tools.map(toolSpec), ...(choice ? { toolChoice: choice } : {}) };
    if (request.tool_choice === 'none') dropped.push('tool_choice');
  }
  if (request.parallel_tool_calls === false) dropped.push('parallel_tool_calls');
  if (thinking) body.additionalModelRequestFields = { thinking };
  const format = request.response_format;
  // An output constraint is never dropped: Converse has no bare JSON mode to map json_object to.
  if (format?.type === 'json_object') throw unsupportedContent('response_format json_object', route.model?.metadata.slug ?? route.upstreamModel, 'Converse constrains output only by a JSON schema; send a json_schema format instead');
  if (format?.type === 'json_schema') {
    body.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { schema: JSON.stringify(format.schema), name: format.name, ...(format.description ? { description: format.description } : {}) } },
      },
    };
  }
  const metadata = { ...(request.metadata ?? {}), ...(request.user === undefined ? {} : { user: request.user }) };
  if (Object.keys(metadata).length > 0) body.requestMetadata = metadata;
  return body;
}
