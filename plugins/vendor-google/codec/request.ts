// Canonical request -> Gemini generateContent request (Relay speaking to the upstream).
// The model is not in the body: it is part of the URL (see adapter.ts).
import { toolInputObject, CUSTOM_INPUT_SCHEMA, WEB_SEARCH_HISTORY_NAME, customToolDescription, functionTools, unsupportedContent, unsupportedParameter } from '../../../core/plugin-api/canonical.ts';
import type { CanonicalRequest, ContentPart, CustomTool, DocumentPart, FunctionTool, ImagePart, ToolChoice } from '../../../core/plugin-api/canonical.ts';
import { schemaFields, schemaFor, type SchemaDialect } from './schema-dialect.ts';
import { thinkingConfigFor } from './thinking.ts';
import type { GeminiContent, GeminiPart } from './wire.ts';

/** Origin of reasoning parts Gemini produced (see ReasoningPart.origin). */
export const GEMINI_ORIGIN = 'gemini';

/** What the request encoder drops or changes, and why (tested in test/codec.test.ts). */
export const GEMINI_REQUEST_DROPPED = {
  'tool call ids': 'Gemini pairs a functionResponse with its functionCall by name and order; ids are not sent',
  'reasoning text': 'thought summaries are not sent back; only the signature of Gemini\'s own thinking is',
  'reasoning from another origin': 'Gemini cannot read other vendors\' signed or encrypted reasoning; named `reasoning` in x-relay-dropped',
  parallel_tool_calls: 'no Gemini field (Gemini may call functions in parallel); false is named `parallel_tool_calls`',
  'response_format json_schema name, description and strict': 'responseJsonSchema carries only the schema (no effect on the answer)',
  'image detail': 'no Gemini field; named `image.detail` when low or high',
  'images in tool results': 'mapped: sent after the functionResponse in the same turn, introduced by a text part',
  'images and documents in system messages': 'refused (400): systemInstruction carries text only',
  'images and documents in assistant messages': 'mapped: model turns take inlineData and fileData (an image model\'s answer goes back for the next edit)',
  metadata: 'no Gemini field; named `metadata` (no effect on the answer)',
  user: 'no Gemini field; named `user` (no effect on the answer)',
  'refusal parts in history': 'sent as text',
  'position of system messages inside the conversation': 'appended to systemInstruction',
  'stop sequences beyond the fifth': 'refused (400): Gemini accepts at most five, and ignoring one changes the answer',
  'tool strict flag': 'no Gemini field (function declarations have no strict mode); named `tools.strict`',
  'reasoning effort with a budget': 'Gemini takes one thinkingBudget: an explicit budget_tokens wins over the effort',
  'custom tools': 'sent as a function with one string parameter "input" (the plugin API\'s custom-tool helpers)',
  'web search (the tool and the searches of the history)': 'not mapped to google_search yet; named `tools.web_search`, `history.web_search_call`',
} as const;

/** Gemini's limit on stopSequences. */
const MAX_STOP_SEQUENCES = 5;

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', heic: 'image/heic' };

function image(part: ImagePart, dropped: string[]): GeminiPart {
  if (part.detail === 'low' || part.detail === 'high') dropped.push('image.detail');
  if (part.source.type === 'base64') return { inlineData: { mimeType: part.source.media_type, data: part.source.data } };
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(part.source.url)?.[1]?.toLowerCase() ?? '';
  return { fileData: { mimeType: IMAGE_TYPES[ext] ?? 'image/jpeg', fileUri: part.source.url } };
}

const DOCUMENT_TYPES: Record<string, string> = { pdf: 'application/pdf', txt: 'text/plain', md: 'text/markdown', html: 'text/html', csv: 'text/csv' };

/** A document as inline bytes or a file URI Gemini fetches; a vendor file id is refused. */
function documentPart(part: DocumentPart, model: string): GeminiPart {
  const s = part.source;
  if (s.type === 'text') return { text: s.text };
  if (s.type === 'base64') return { inlineData: { mimeType: s.media_type, data: s.data } };
  if (s.type === 'file_id') throw unsupportedContent(`the file \`${s.file_id}\``, model, 'a file id names a file in another vendor\'s store; send the file\'s bytes instead');
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(s.url);
  if (data) return { inlineData: { mimeType: data[1], data: data[2] } };
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(s.url)?.[1]?.toLowerCase() ?? '';
  return { fileData: { mimeType: DOCUMENT_TYPES[ext] ?? 'application/pdf', fileUri: s.url } };
}


/** A function result must be an object: JSON object text is kept, anything else is wrapped. */
function resultObject(text: string, isError: boolean | undefined): Record<string, unknown> {
  if (!isError) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // plain text
    }
  }
  return isError ? { error: text } : { output: text };
}

/** A function response carries no image: the result's images follow it in the same turn. */
function resultImages(result: Extract<ContentPart, { type: 'tool_result' }>, dropped: string[]): GeminiPart[] {
  const images = result.content.filter((p) => p.type === 'image');
  if (images.length === 0) return [];
  const intro = `The result of the ${images.length === 1 ? 'call above included this image' : 'call above included these images'}:`;
  return [{ text: intro }, ...images.map((p) => image(p, dropped))];
}

/** Tool names by call id, from the assistant turns of the history (results carry only the id). */
function toolNamesById(request: CanonicalRequest): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of request.messages) for (const p of m.content) if (p.type === 'tool_call') names.set(p.id, p.name);
  return names;
}

/**
 * Parts of one message. A Gemini signature (a reasoning part of origin gemini) is attached to
 * the next part of the message, or to the previous one when it comes last.
 */
function partsOf(content: ContentPart[], names: Map<string, string>, model: string, dropped: string[]): GeminiPart[] {
  const out: GeminiPart[] = [];
  let signature: string | undefined;
  for (const part of content) {
    let encoded: GeminiPart | null = null;
    switch (part.type) {
      case 'text':
      case 'refusal':
        encoded = part.text === '' ? null : { text: part.text };
        break;
      case 'image':
        encoded = image(part, dropped);
        break;
      case 'document':
        encoded = documentPart(part, model);
        break;
      case 'tool_call':
        encoded = { functionCall: { name: part.name, args: toolInputObject(part.arguments, part.tool_kind) } };
        break;
      case 'tool_result': {
        const text = part.content.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
        encoded = { functionResponse: { name: names.get(part.tool_call_id) ?? part.tool_call_id, response: resultObject(text, part.is_error) } };
        break;
      }
      case 'reasoning':
        if (part.origin === GEMINI_ORIGIN && part.signature) signature = part.signature;
        else if (part.origin !== GEMINI_ORIGIN) dropped.push('reasoning');
        break;
      case 'web_search_call':
        dropped.push(WEB_SEARCH_HISTORY_NAME);
        break;
    }
    if (!encoded) continue;
    if (signature !== undefined) {
      encoded.thoughtSignature = signature;
      signature = undefined;
    }
    out.push(encoded);
    if (part.type === 'tool_result') out.push(...resultImages(part, dropped));
  }
  const last = out[out.length - 1];
  if (signature !== undefined && last && last.thoughtSignature === undefined) last.thoughtSignature = signature;
  return out;
}

function encodeContents(request: CanonicalRequest, dropped: string[]): { system: GeminiPart[]; contents: GeminiContent[] } {
  const system: GeminiPart[] = (request.system ?? []).filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  const names = toolNamesById(request);
  const contents: Array<GeminiContent & { parts: GeminiPart[] }> = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      for (const part of message.content) {
        if (part.type === 'image' || part.type === 'document') throw unsupportedContent(`${part.type === 'image' ? 'an image' : 'a document'} in a system message`, request.model, 'Gemini\'s systemInstruction carries text only');
        if (part.type === 'text' && part.text !== '') system.push({ text: part.text });
      }
      continue;
    }
    const parts = partsOf(message.content, names, request.model, dropped);
    if (parts.length === 0) continue;
    const role = message.role === 'assistant' ? 'model' : 'user';
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return { system, contents };
}

function encodeTool(tool: FunctionTool | CustomTool, dialect: SchemaDialect): Record<string, unknown> {
  const field = schemaFields(dialect).parameters;
  if (tool.type === 'custom') return { name: tool.name, description: customToolDescription(tool), [field]: schemaFor(dialect, { ...CUSTOM_INPUT_SCHEMA }) };
  return {
    name: tool.name,
    ...(tool.description === undefined ? {} : { description: tool.description }),
    ...(tool.parameters === undefined ? {} : { [field]: schemaFor(dialect, tool.parameters) }),
  };
}

function encodeToolChoice(choice: ToolChoice): Record<string, unknown> {
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
}

function generationConfig(request: CanonicalRequest, dialect: SchemaDialect): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  if (request.max_output_tokens !== undefined) config.maxOutputTokens = request.max_output_tokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.top_p !== undefined) config.topP = request.top_p;
  if (request.stop && request.stop.length > MAX_STOP_SEQUENCES) {
    throw unsupportedParameter('stop', request.model, `Gemini accepts at most ${MAX_STOP_SEQUENCES} stop sequences (${request.stop.length} were sent)`);
  }
  if (request.stop && request.stop.length > 0) config.stopSequences = request.stop;
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config[schemaFields(dialect).response] = schemaFor(dialect, format.schema);
  }
  const thinking = thinkingConfigFor(request);
  if (thinking) config.thinkingConfig = thinking;
  return config;
}

export function encodeGeminiRequest(request: CanonicalRequest, dialect: SchemaDialect, dropped: string[] = []): Record<string, unknown> {
  const { system, contents } = encodeContents(request, dropped);
  const body: Record<string, unknown> = { contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  const tools = functionTools(request.tools, dropped);
  if (tools.length > 0) {
    body.tools = [{ functionDeclarations: tools.map((t) => encodeTool(t, dialect)) }];
    if (request.tool_choice !== undefined) body.toolConfig = encodeToolChoice(request.tool_choice);
  }
  const config = generationConfig(request, dialect);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  namedDrops(request, dropped);
  return body;
}

/** The request fields Gemini has no place for, by name (none changes the answer's content but parallel_tool_calls false). */
function namedDrops(request: CanonicalRequest, dropped: string[]): void {
  if (request.parallel_tool_calls === false) dropped.push('parallel_tool_calls');
  if (request.metadata !== undefined) dropped.push('metadata');
  if (request.user !== undefined) dropped.push('user');
  if (request.tools?.some((t) => t.type === 'function' && t.strict === true)) dropped.push('tools.strict');
}
