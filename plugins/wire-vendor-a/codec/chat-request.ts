// OpenAI Chat Completions request JSON -> canonical request (the inbound side of 'openai.chat').
// Input is validated per message and per part, so a 400 names the exact JSON pointer;
// parts and fields that cannot be carried are dropped by the rules in CHAT_REQUEST_DROPPED.
import { RelayError, Type, validateBody, type Static } from '../../../core/plugin-api.ts';
import { TokenCount, type CanonicalRequest, type ContentPart, type ImagePart, type Message, type ResponseFormat, type TextPart, type Tool, type ToolChoice, type ToolResultPart } from '../../../core/plugin-api/canonical.ts';
import { effortFromOpenAI } from './reasoning-effort.ts';
import { unsupportedContent } from '../../../core/plugin-api/canonical.ts';
import { documentFromFile } from './file-parts.ts';
import { refuseModeration } from './moderation.ts';

/** What the Chat inbound decoder drops, and why. Pinned by test/translation/conformance.test.ts. */
export const CHAT_REQUEST_DROPPED = {
  'n of 1': 'one choice is what Relay returns anyway (n above 1 is refused with a 400)',
  'frequency_penalty, presence_penalty, logit_bias, seed, logprobs, top_logprobs': 'no canonical field; each is named in x-relay-dropped (sampling changes, so the answer may differ)',
  'audio, modalities, prediction, service_tier, store, verbosity': 'no canonical field; each is named in x-relay-dropped',
  'prompt_cache_key, prompt_cache_options, prompt_cache_retention': 'OpenAI\'s prompt cache settings, no canonical field; each is named in x-relay-dropped',
  moderation: 'refused with a 400 naming it: an answer without the screening asked for is not one to serve in silence',
  'any other top-level member': 'named in x-relay-dropped (a plain identifier by its name, others as `other members`)',
  web_search_options: 'mapped to the canonical web search tool (search_context_size, user_location); an upstream without web search names it `tools.web_search`',
  'deprecated function calling (functions, function_call, role "function" messages)': 'refused with a 400 naming it (use tools and tool_calls), never dropped',
  'allowed_tools subsets of tool_choice': 'the mode is kept, the subset has no canonical field; named `tool_choice.tools`',
  'image_url parts in tool messages': 'kept: they become images of the tool result; other non-text parts in tool, assistant or system messages are refused (400)',
} as const;

const Detail = Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')]);
const TextContentPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const FileContentPart = Type.Object({
  type: Type.Literal('file'),
  file: Type.Object({
    file_data: Type.Optional(Type.String()), file_id: Type.Optional(Type.String()), filename: Type.Optional(Type.String()),
  }),
});
const ImageContentPart = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({ url: Type.String({ minLength: 1 }), detail: Type.Optional(Detail) }),
});
const RefusalContentPart = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });
const AnyPart = Type.Object({ type: Type.String() });
const Content = Type.Union([Type.String(), Type.Array(AnyPart), Type.Null()]);

const FunctionCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String({ minLength: 1 }), arguments: Type.String() }),
});
const CustomCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('custom'),
  custom: Type.Object({ name: Type.String({ minLength: 1 }), input: Type.String() }),
});
const AnyMessage = Type.Object({ role: Type.String() });
const SystemMessage = Type.Object({ role: Type.Union([Type.Literal('system'), Type.Literal('developer')]), content: Content });
const UserMessage = Type.Object({ role: Type.Literal('user'), content: Content });
const AssistantMessage = Type.Object({
  role: Type.Literal('assistant'),
  content: Type.Optional(Content),
  refusal: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  tool_calls: Type.Optional(Type.Array(Type.Object({ type: Type.Optional(Type.String()) }))),
});
const ToolMessage = Type.Object({ role: Type.Literal('tool'), tool_call_id: Type.String(), content: Content });

const Grammar = Type.Object({ syntax: Type.String(), definition: Type.String() });
const FunctionToolDef = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  }),
});
const CustomToolDef = Type.Object({
  type: Type.Literal('custom'),
  custom: Type.Object({
    name: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    format: Type.Optional(Type.Union([
      Type.Object({ type: Type.Literal('text') }),
      Type.Object({ type: Type.Literal('grammar'), grammar: Grammar }),
    ])),
  }),
});

const ToolChoiceDef = Type.Union([
  Type.Literal('none'), Type.Literal('auto'), Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }) }),
  Type.Object({ type: Type.Literal('custom'), custom: Type.Object({ name: Type.String() }) }),
  Type.Object({ type: Type.Literal('allowed_tools'), allowed_tools: Type.Object({ mode: Type.Union([Type.Literal('auto'), Type.Literal('required')]) }) }),
]);

const ResponseFormatDef = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('json_object') }),
  Type.Object({
    type: Type.Literal('json_schema'),
    json_schema: Type.Object({
      name: Type.String({ minLength: 1 }),
      description: Type.Optional(Type.String()),
      schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    }),
  }),
]);

const Place = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const WebSearchOptions = Type.Object({
  search_context_size: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')])),
  user_location: Type.Optional(Type.Union([Type.Object({
    approximate: Type.Optional(Type.Object({ city: Place, region: Place, country: Place, timezone: Place })),
  }), Type.Null()])),
});

const ChatRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  web_search_options: Type.Optional(WebSearchOptions),
  messages: Type.Array(AnyMessage, { minItems: 1 }),
  tools: Type.Optional(Type.Array(Type.Object({ type: Type.String() }))),
  tool_choice: Type.Optional(ToolChoiceDef),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  max_tokens: Type.Optional(Type.Union([TokenCount(1), Type.Null()])),
  max_completion_tokens: Type.Optional(Type.Union([TokenCount(1), Type.Null()])),
  temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
  top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()])),
  reasoning_effort: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  response_format: Type.Optional(ResponseFormatDef),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream_options: Type.Optional(Type.Union([Type.Object({ include_usage: Type.Optional(Type.Boolean()) }), Type.Null()])),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  user: Type.Optional(Type.String()),
  safety_identifier: Type.Optional(Type.String()),
});
type ChatRequest = Static<typeof ChatRequest>;
/** The members the decoder reads. */
export const CHAT_REQUEST_MEMBERS: readonly string[] = Object.keys(ChatRequest.properties);

/** Parses a data: URL into a base64 image source; other URLs stay URLs. */
export function imageFromUrl(url: string, detail?: ImagePart['detail']): ImagePart {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  const source: ImagePart['source'] = match
    ? { type: 'base64', media_type: match[1], data: match[2] }
    : { type: 'url', url };
  return detail === undefined ? { type: 'image', source } : { type: 'image', source, detail };
}

/** Text only: any other part (an image in a system message, say) is refused, not dropped. */
function textParts(content: Static<typeof Content>, pointer: string, model: string): TextPart[] {
  if (content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const out: TextPart[] = [];
  content.forEach((part, i) => {
    if (part.type === 'text') out.push({ type: 'text', text: validateBody<Static<typeof TextContentPart>>(TextContentPart, part, `${pointer}/${i}`).text });
    else throw unsupportedContent(`the ${String(part.type)} part at ${pointer}/${i}`, model, 'this message carries text only once translated');
  });
  return out;
}

/** A tool message's content: text, and images (a tool result may carry them). */
function toolResultParts(content: Static<typeof Content>, pointer: string, model: string): ToolResultPart['content'] {
  if (content === null || typeof content === 'string') return textParts(content, pointer, model);
  return content.map((part, i) => {
    const at = `${pointer}/${i}`;
    if (part.type === 'image_url') {
      const image = validateBody<Static<typeof ImageContentPart>>(ImageContentPart, part, at);
      return imageFromUrl(image.image_url.url, image.image_url.detail);
    }
    if (part.type === 'text') return { type: 'text' as const, text: validateBody<Static<typeof TextContentPart>>(TextContentPart, part, at).text };
    throw unsupportedContent(`the ${String(part.type)} part at ${at}`, model, 'a tool result carries text and images only');
  });
}

function userParts(content: Static<typeof Content>, pointer: string, model: string): ContentPart[] {
  if (content === null || typeof content === 'string') return textParts(content, pointer, model);
  const out: ContentPart[] = [];
  content.forEach((part, i) => {
    const at = `${pointer}/${i}`;
    if (part.type === 'text') out.push({ type: 'text', text: validateBody<Static<typeof TextContentPart>>(TextContentPart, part, at).text });
    else if (part.type === 'image_url') {
      const image = validateBody<Static<typeof ImageContentPart>>(ImageContentPart, part, at);
      out.push(imageFromUrl(image.image_url.url, image.image_url.detail));
    } else if (part.type === 'file') {
      const file = validateBody<Static<typeof FileContentPart>>(FileContentPart, part, at);
      out.push(documentFromFile(file.file, `${at}/file`));
    } else if (part.type === 'input_audio') throw unsupportedContent(`the input_audio part at ${at}`, model, 'audio is not translated to other vendors');
    else throw unsupportedContent(`the ${String(part.type)} part at ${at}`, model, 'it has no form other vendors take');
  });
  return out;
}

function assistantParts(message: Static<typeof AssistantMessage>, pointer: string, model: string): ContentPart[] {
  const out: ContentPart[] = [];
  const content = message.content ?? null;
  if (typeof content === 'string' && content !== '') out.push({ type: 'text', text: content });
  if (Array.isArray(content)) {
    content.forEach((part, i) => {
      const at = `${pointer}/content/${i}`;
      if (part.type === 'text') out.push({ type: 'text', text: validateBody<Static<typeof TextContentPart>>(TextContentPart, part, at).text });
      else if (part.type === 'refusal') out.push({ type: 'refusal', text: validateBody<Static<typeof RefusalContentPart>>(RefusalContentPart, part, at).refusal });
      else throw unsupportedContent(`the ${String(part.type)} part at ${at}`, model, 'an assistant message carries text and refusals only');
    });
  }
  if (typeof message.refusal === 'string' && message.refusal !== '') out.push({ type: 'refusal', text: message.refusal });
  (message.tool_calls ?? []).forEach((call, i) => {
    const at = `${pointer}/tool_calls/${i}`;
    if (call.type === 'custom') {
      const c = validateBody<Static<typeof CustomCall>>(CustomCall, call, at);
      out.push({ type: 'tool_call', id: c.id, name: c.custom.name, arguments: c.custom.input, tool_kind: 'custom' });
    } else {
      const f = validateBody<Static<typeof FunctionCall>>(FunctionCall, call, at);
      out.push({ type: 'tool_call', id: f.id, name: f.function.name, arguments: f.function.arguments, tool_kind: 'function' });
    }
  });
  return out;
}

function decodeMessages(raw: ChatRequest['messages'], model: string): { system: TextPart[]; messages: Message[] } {
  const system: TextPart[] = [];
  const messages: Message[] = [];
  raw.forEach((message, i) => {
    const at = `/messages/${i}`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const m = validateBody<Static<typeof SystemMessage>>(SystemMessage, message, at);
        const parts = textParts(m.content, `${at}/content`, model);
        // Leading system prompts become canonical `system`; later ones stay in place.
        if (messages.length === 0) system.push(...parts);
        else if (parts.length > 0) messages.push({ role: 'system', content: parts });
        return;
      }
      case 'user': {
        const m = validateBody<Static<typeof UserMessage>>(UserMessage, message, at);
        const parts = userParts(m.content, `${at}/content`, model);
        if (parts.length > 0) messages.push({ role: 'user', content: parts });
        return;
      }
      case 'assistant': {
        const m = validateBody<Static<typeof AssistantMessage>>(AssistantMessage, message, at);
        if ((message as Record<string, unknown>).function_call != null) throw deprecatedFunctions(`${at}/function_call`, model);
        const parts = assistantParts(m, at, model);
        if (parts.length > 0) messages.push({ role: 'assistant', content: parts });
        return;
      }
      case 'tool': {
        const m = validateBody<Static<typeof ToolMessage>>(ToolMessage, message, at);
        const result: ContentPart = { type: 'tool_result', tool_call_id: m.tool_call_id, content: toolResultParts(m.content, `${at}/content`, model) };
        const last = messages[messages.length - 1];
        // Consecutive tool messages answer one assistant turn: one canonical user message.
        if (last && last.role === 'user' && last.content.length > 0 && last.content.every((p) => p.type === 'tool_result')) last.content.push(result);
        else messages.push({ role: 'user', content: [result] });
        return;
      }
      case 'function':
        throw deprecatedFunctions(at, model);
      default:
        validateBody(Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]), message.role, `${at}/role`);
    }
  });
  return { system, messages };
}

function decodeTools(raw: NonNullable<ChatRequest['tools']>): Tool[] {
  const tools: Tool[] = [];
  raw.forEach((tool, i) => {
    const at = `/tools/${i}`;
    if (tool.type === 'function') {
      const { function: f } = validateBody<Static<typeof FunctionToolDef>>(FunctionToolDef, tool, at);
      tools.push({
        type: 'function', name: f.name,
        ...(f.description === undefined ? {} : { description: f.description }),
        ...(f.parameters === undefined ? {} : { parameters: f.parameters }),
        ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
      });
    } else if (tool.type === 'custom') {
      const { custom: c } = validateBody<Static<typeof CustomToolDef>>(CustomToolDef, tool, at);
      tools.push({
        type: 'custom', name: c.name,
        ...(c.description === undefined ? {} : { description: c.description }),
        ...(c.format === undefined ? {} : {
          format: c.format.type === 'text'
            ? { type: 'text' as const }
            : { type: 'grammar' as const, syntax: c.format.grammar.syntax, definition: c.format.grammar.definition },
        }),
      });
    } else {
      validateBody(Type.Union([Type.Literal('function'), Type.Literal('custom')]), tool.type, `${at}/type`);
    }
  });
  return tools;
}

function decodeToolChoice(choice: Static<typeof ToolChoiceDef>): ToolChoice {
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function') return { type: 'tool', name: choice.function.name };
  if (choice.type === 'custom') return { type: 'tool', name: choice.custom.name };
  return choice.allowed_tools.mode; // the allowed subset is dropped by rule
}

function decodeResponseFormat(format: Static<typeof ResponseFormatDef>): ResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  const s = format.json_schema;
  return {
    type: 'json_schema', name: s.name, schema: s.schema ?? {},
    ...(typeof s.strict === 'boolean' ? { strict: s.strict } : {}),
    ...(s.description === undefined ? {} : { description: s.description }),
  };
}

/** Deprecated function calling carries conversation content: refused, never dropped. */
function deprecatedFunctions(at: string, model: string): RelayError {
  return unsupportedContent(`deprecated function calling (${at})`, model, 'it is not translated; send tools and tool_calls instead');
}

/** Chat's web_search_options as the canonical web search tool. */
function webSearchTool(options: Static<typeof WebSearchOptions>): Tool {
  const tool: Extract<Tool, { type: 'web_search' }> = { type: 'web_search' };
  if (options.search_context_size !== undefined) tool.search_context_size = options.search_context_size;
  const place = Object.entries(options.user_location?.approximate ?? {}).filter(([, v]) => typeof v === 'string');
  if (place.length > 0) tool.user_location = Object.fromEntries(place);
  return tool;
}

export function decodeChatRequest(body: unknown): CanonicalRequest {
  const req = validateBody<ChatRequest>(ChatRequest, body);
  const raw = body as Record<string, unknown>;
  for (const name of ['functions', 'function_call']) if (raw[name] != null) throw deprecatedFunctions(name, req.model);
  refuseModeration(raw, req.model);
  // One choice is all a translated answer has: more would be answered as if asked for one.
  if (typeof raw.n === 'number' && raw.n > 1) throw unsupportedContent(`n = ${raw.n}`, req.model, 'a translated answer has one choice; send n separate requests');
  const { system, messages } = decodeMessages(req.messages, req.model);
  const out: CanonicalRequest = { model: req.model, messages };
  if (system.length > 0) out.system = system;
  if (req.tools && req.tools.length > 0) out.tools = decodeTools(req.tools);
  if (req.web_search_options) out.tools = [...(out.tools ?? []), webSearchTool(req.web_search_options)];
  if (req.tool_choice !== undefined) out.tool_choice = decodeToolChoice(req.tool_choice);
  if (req.parallel_tool_calls !== undefined) out.parallel_tool_calls = req.parallel_tool_calls;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (typeof maxTokens === 'number') out.max_output_tokens = maxTokens;
  if (typeof req.temperature === 'number') out.temperature = req.temperature;
  if (typeof req.top_p === 'number') out.top_p = req.top_p;
  if (typeof req.stop === 'string') out.stop = [req.stop];
  else if (Array.isArray(req.stop) && req.stop.length > 0) out.stop = req.stop;
  if (typeof req.reasoning_effort === 'string') out.reasoning = { effort: effortFromOpenAI(req.reasoning_effort, '/reasoning_effort') };
  if (req.response_format !== undefined) out.response_format = decodeResponseFormat(req.response_format);
  if (typeof req.stream === 'boolean') out.stream = req.stream;
  if (req.metadata) out.metadata = req.metadata;
  const user = req.safety_identifier ?? req.user;
  if (user !== undefined) out.user = user;
  return out;
}
