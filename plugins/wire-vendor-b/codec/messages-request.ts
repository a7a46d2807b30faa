// Anthropic Messages request JSON -> canonical request (the inbound side of 'anthropic.messages').
// Claude Code's requests (CLIENTS.md) carry `system` as text blocks with cache_control,
// thinking {type:"adaptive"} or {type:"enabled", budget_tokens}, and with newer models
// {"role":"system"} messages inside `messages`, which are accepted.
import { Type, validateBody, type Static } from '../../../core/plugin-api.ts';
import type { CanonicalRequest, ContentPart, DocumentPart, ImagePart, Message, ReasoningPart, TextPart, Tool, ToolChoice, ToolResultPart } from '../../../core/plugin-api/canonical.ts';
import { TokenCount, unsupportedContent } from '../../../core/plugin-api/canonical.ts';
import { openSignature } from './reasoning-envelope.ts';
import { effortForBudget, effortFromOutputConfig } from './thinking-budget.ts';
import { searchFromUse, withResult } from './web-search-blocks.ts';

/** What the Messages inbound decoder drops, and why. Pinned by test/translation/conformance.test.ts. */
export const MESSAGES_REQUEST_DROPPED = {
  cache_control: 'prompt caching hints have no canonical field (cache usage is still reported; a Claude upstream, on Anthropic or Bedrock, gets breakpoints of its own)',
  top_k: 'no canonical field',
  'context_management, container, mcp_servers, service_tier, speed': 'no canonical field',
  'server tools (typed tools such as bash_*, text_editor_*, computer_*, code_execution_*)': 'they run inside Anthropic; forwarded as sent only on an Anthropic upstream (passthrough)',
  'web search tools (web_search_YYYYMMDD)': 'mapped to the canonical web search (max_uses, allowed/blocked domains, user location); cache_control dropped unnamed',
  'server_tool_use and *_tool_result blocks of server tools in history': 'no canonical part; named `messages.<type>` (search_result blocks and image and document file sources are refused); a web search\'s pair is mapped to a canonical web search, which an upstream of another vendor names `history.web_search_call`',
  'citations, and a document\'s context': 'no canonical field (a document\'s title becomes its file name); named `citations`, `document.context`',
  'metadata.user_id': 'becomes canonical `user`',
  'any other top-level member': 'named in x-relay-dropped (a plain identifier by its name, others as `other members`)',
} as const;

const Typed = Type.Object({ type: Type.String() });
const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const ImageBlock = Type.Object({
  type: Type.Literal('image'),
  source: Type.Union([
    Type.Object({ type: Type.Literal('base64'), media_type: Type.String(), data: Type.String() }),
    Type.Object({ type: Type.Literal('url'), url: Type.String() }),
    Type.Object({ type: Type.Literal('file') }),
  ]),
});
const ToolUseBlock = Type.Object({
  // An object, as Anthropic requires: 42 or a string would reach the upstream as arguments "42" (wire-vendor-a refuses non-text arguments alike).
  type: Type.Literal('tool_use'), id: Type.String(), name: Type.String({ minLength: 1 }), input: Type.Record(Type.String(), Type.Unknown()),
});
const ToolResultBlock = Type.Object({
  type: Type.Literal('tool_result'),
  tool_use_id: Type.String(),
  content: Type.Optional(Type.Union([Type.String(), Type.Array(Typed)])),
  is_error: Type.Optional(Type.Boolean()),
});
const ThinkingBlock = Type.Object({ type: Type.Literal('thinking'), thinking: Type.String(), signature: Type.Optional(Type.String()) });
const RedactedThinkingBlock = Type.Object({ type: Type.Literal('redacted_thinking'), data: Type.String() });

const WebSearchToolDef = Type.Object({
  type: Type.String(),
  max_uses: Type.Optional(Type.Integer({ minimum: 1 })),
  allowed_domains: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  blocked_domains: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  user_location: Type.Optional(Type.Union([Type.Object({
    city: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    region: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    country: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    timezone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }), Type.Null()])),
});
/** Anthropic's web search tool types (web_search_20250305 and its later versions). */
export const WEB_SEARCH_TOOL_TYPE = /^web_search_\d{8}$/;

const ServerToolUseBlock = Type.Object({ type: Type.Literal('server_tool_use'), id: Type.String(), name: Type.String(), input: Type.Unknown() });
const WebSearchResultBlock = Type.Object({ type: Type.Literal('web_search_tool_result'), tool_use_id: Type.String(), content: Type.Unknown() });

const MessageParam = Type.Object({
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
  content: Type.Union([Type.String(), Type.Array(Typed)]),
});

const ToolDef = Type.Object({
  type: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  input_schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  strict: Type.Optional(Type.Boolean()),
});

const MessagesRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  max_tokens: TokenCount(1),
  messages: Type.Array(Type.Unknown()),
  system: Type.Optional(Type.Union([Type.String(), Type.Array(Typed)])),
  stop_sequences: Type.Optional(Type.Array(Type.String())),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  tools: Type.Optional(Type.Array(Type.Object({ type: Type.Optional(Type.Union([Type.String(), Type.Null()])) }))),
  tool_choice: Type.Optional(Type.Object({
    type: Type.Union([Type.Literal('auto'), Type.Literal('any'), Type.Literal('tool'), Type.Literal('none')]),
    name: Type.Optional(Type.String()),
    disable_parallel_tool_use: Type.Optional(Type.Boolean()),
  })),
  thinking: Type.Optional(Type.Union([
    Type.Object({ type: Type.Literal('enabled'), budget_tokens: TokenCount(0) }),
    Type.Object({ type: Type.Literal('disabled') }),
    Type.Object({ type: Type.Literal('adaptive') }),
  ])),
  // The structured-outputs beta's name for output_config.format (structured-outputs-2025-11-13).
  output_format: Type.Optional(Type.Union([
    Type.Object({ type: Type.Literal('json_schema'), schema: Type.Record(Type.String(), Type.Unknown()) }),
    Type.Null(),
  ])),
  output_config: Type.Optional(Type.Object({
    effort: Type.Optional(Type.String()),
    format: Type.Optional(Type.Union([
      Type.Object({ type: Type.Literal('json_schema'), schema: Type.Record(Type.String(), Type.Unknown()) }),
      Type.Null(),
    ])),
  })),
  metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Type.Union([Type.String(), Type.Null()])) })),
  stream: Type.Optional(Type.Boolean()),
});
type MessagesRequest = Static<typeof MessagesRequest>;
/** The members the decoder reads. */
export const MESSAGES_REQUEST_MEMBERS: readonly string[] = Object.keys(MessagesRequest.properties);

function image(block: Static<typeof ImageBlock>, model: string, pointer: string): ImagePart {
  const s = block.source;
  if (s.type === 'base64') return { type: 'image', source: { type: 'base64', media_type: s.media_type, data: s.data } };
  if (s.type === 'url') return { type: 'image', source: { type: 'url', url: s.url } };
  throw unsupportedContent(`the image file source at ${pointer}`, model, 'a file id names a file in Anthropic\'s store; send the image\'s URL or bytes instead');
}

const DocumentBlock = Type.Object({
  type: Type.Literal('document'),
  source: Type.Union([
    Type.Object({ type: Type.Literal('base64'), media_type: Type.String(), data: Type.String() }),
    Type.Object({ type: Type.Literal('url'), url: Type.String() }),
    Type.Object({ type: Type.Literal('text'), data: Type.String() }),
    Type.Object({ type: Type.Literal('content'), content: Type.Union([Type.String(), Type.Array(Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) }))]) }),
    Type.Object({ type: Type.Literal('file'), file_id: Type.String() }),
  ]),
  title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** A document block as a canonical document; custom content becomes its text. */
function documentPart(b: Static<typeof DocumentBlock>, model: string, pointer: string): DocumentPart {
  const s = b.source;
  // Translated means another vendor's upstream, which cannot open a file in Anthropic's store.
  if (s.type === 'file') throw unsupportedContent(`the document file source at ${pointer}`, model, 'a file id names a file in Anthropic\'s store; send the document\'s bytes, text or URL instead');
  const filename = typeof b.title === 'string' && b.title !== '' ? { filename: b.title } : {};
  const source: DocumentPart['source'] = s.type === 'base64' ? { type: 'base64', media_type: s.media_type, data: s.data }
    : s.type === 'url' ? { type: 'url', url: s.url }
      : s.type === 'text' ? { type: 'text', text: s.data }
        : { type: 'text', text: typeof s.content === 'string' ? s.content : s.content.map((c) => c.text ?? '').join('\n\n') };
  return { type: 'document', source, ...filename };
}

function toolResultContent(content: Static<typeof ToolResultBlock>['content'], pointer: string, model: string): ToolResultPart['content'] {
  if (content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  const out: ToolResultPart['content'] = [];
  content.forEach((block, i) => {
    const at = `${pointer}/content/${i}`;
    if (block.type === 'text') out.push({ type: 'text', text: validateBody<Static<typeof TextBlock>>(TextBlock, block, at).text });
    else if (block.type === 'image') {
      out.push(image(validateBody<Static<typeof ImageBlock>>(ImageBlock, block, at), model, at));
    }
  });
  return out;
}

function block(raw: Static<typeof Typed>, pointer: string, model: string): ContentPart | null {
  switch (raw.type) {
    case 'text':
      return { type: 'text', text: validateBody<Static<typeof TextBlock>>(TextBlock, raw, pointer).text };
    case 'image':
      return image(validateBody<Static<typeof ImageBlock>>(ImageBlock, raw, pointer), model, pointer);
    case 'document':
      return documentPart(validateBody<Static<typeof DocumentBlock>>(DocumentBlock, raw, pointer), model, pointer);
    case 'tool_use': {
      const b = validateBody<Static<typeof ToolUseBlock>>(ToolUseBlock, raw, pointer);
      return { type: 'tool_call', id: b.id, name: b.name, arguments: JSON.stringify(b.input), tool_kind: 'function' };
    }
    case 'tool_result': {
      const b = validateBody<Static<typeof ToolResultBlock>>(ToolResultBlock, raw, pointer);
      const part: ToolResultPart = { type: 'tool_result', tool_call_id: b.tool_use_id, content: toolResultContent(b.content, pointer, model) };
      if (b.is_error !== undefined) part.is_error = b.is_error;
      return part;
    }
    case 'thinking': {
      const b = validateBody<Static<typeof ThinkingBlock>>(ThinkingBlock, raw, pointer);
      const part: ReasoningPart = { type: 'reasoning' };
      if (b.thinking !== '') part.text = b.thinking;
      Object.assign(part, b.signature ? openSignature(b.signature) : { origin: 'anthropic' });
      return part;
    }
    case 'redacted_thinking': {
      const b = validateBody<Static<typeof RedactedThinkingBlock>>(RedactedThinkingBlock, raw, pointer);
      return { type: 'reasoning', encrypted: b.data, origin: 'anthropic' };
    }
    case 'search_result':
      throw unsupportedContent(`the search_result block at ${pointer}`, model, 'it has no form other vendors take');
    default:
      return null; // server tool blocks of history: dropped by rule
  }
}

/** A message's blocks as canonical parts; a web search's server_tool_use and its result become one part. */
function blocksOf(raw: Array<Static<typeof Typed>>, at: string, model: string): ContentPart[] {
  const out: ContentPart[] = [];
  const searches = new Map<string, number>();
  raw.forEach((b, j) => {
    const pointer = `${at}/content/${j}`;
    if (b.type === 'server_tool_use' && (b as { name?: unknown }).name === 'web_search') {
      const use = validateBody<Static<typeof ServerToolUseBlock>>(ServerToolUseBlock, b, pointer);
      searches.set(use.id, out.length);
      out.push(searchFromUse(use));
      return;
    }
    if (b.type === 'web_search_tool_result') {
      const result = validateBody<Static<typeof WebSearchResultBlock>>(WebSearchResultBlock, b, pointer);
      const k = searches.get(result.tool_use_id);
      if (k !== undefined) out[k] = withResult(out[k] as Extract<ContentPart, { type: 'web_search_call' }>, result);
      return;
    }
    const part = block(b, pointer, model);
    if (part) out.push(part);
  });
  return out;
}

function decodeMessages(raw: unknown[], model: string): Message[] {
  const messages: Message[] = [];
  raw.forEach((value, i) => {
    const at = `/messages/${i}`;
    const m = validateBody<Static<typeof MessageParam>>(MessageParam, value, at);
    let content: ContentPart[];
    if (typeof m.content === 'string') content = m.content === '' ? [] : [{ type: 'text', text: m.content }];
    else content = blocksOf(m.content, at, model);
    // What a system message holds besides text reaches the upstream encoder, which maps or refuses it.
    if (m.role === 'system') content = content.filter((p) => p.type === 'text' || p.type === 'image' || p.type === 'document');
    if (content.length > 0) messages.push({ role: m.role, content });
  });
  return messages;
}

function decodeSystem(system: NonNullable<MessagesRequest['system']>): TextPart[] {
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return system.map((b, i) => ({ type: 'text' as const, text: validateBody<Static<typeof TextBlock>>(TextBlock, b, `/system/${i}`).text }));
}

function decodeTools(raw: NonNullable<MessagesRequest['tools']>): Tool[] {
  const tools: Tool[] = [];
  raw.forEach((value, i) => {
    if (typeof value.type === 'string' && WEB_SEARCH_TOOL_TYPE.test(value.type)) {
      tools.push(webSearchTool(validateBody<Static<typeof WebSearchToolDef>>(WebSearchToolDef, value, `/tools/${i}`)));
      return;
    }
    // Typed tools other than `custom` are Anthropic server tools: dropped by rule.
    if (value.type !== undefined && value.type !== null && value.type !== 'custom') return;
    const t = validateBody<Static<typeof ToolDef>>(ToolDef, value, `/tools/${i}`);
    tools.push({
      type: 'function', name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      parameters: t.input_schema ?? { type: 'object', properties: {} },
      ...(t.strict === undefined ? {} : { strict: t.strict }),
    });
  });
  return tools;
}

function webSearchTool(def: Static<typeof WebSearchToolDef>): Tool {
  const tool: Extract<Tool, { type: 'web_search' }> = { type: 'web_search' };
  if (def.max_uses !== undefined) tool.max_uses = def.max_uses;
  if (def.allowed_domains) tool.allowed_domains = def.allowed_domains;
  if (def.blocked_domains) tool.blocked_domains = def.blocked_domains;
  const place = Object.entries(def.user_location ?? {}).filter(([k, v]) => k !== 'type' && typeof v === 'string');
  if (place.length > 0) tool.user_location = Object.fromEntries(place);
  return tool;
}

function decodeToolChoice(choice: NonNullable<MessagesRequest['tool_choice']>): ToolChoice {
  if (choice.type === 'any') return 'required';
  if (choice.type === 'tool') return { type: 'tool', name: validateBody<string>(Type.String(), choice.name, '/tool_choice/name') };
  return choice.type;
}

function decodeReasoning(req: MessagesRequest): CanonicalRequest['reasoning'] {
  const configured = req.output_config?.effort === undefined ? undefined : effortFromOutputConfig(req.output_config.effort);
  const thinking = req.thinking;
  if (thinking?.type === 'disabled') return { effort: 'none' };
  if (thinking?.type === 'enabled') return { budget_tokens: thinking.budget_tokens, effort: configured ?? effortForBudget(thinking.budget_tokens) };
  if (thinking?.type === 'adaptive') return configured ? { effort: configured } : {};
  return configured ? { effort: configured } : undefined;
}

export function decodeMessagesRequest(body: unknown): CanonicalRequest {
  const req = validateBody<MessagesRequest>(MessagesRequest, body);
  const out: CanonicalRequest = { model: req.model, messages: decodeMessages(req.messages, req.model), max_output_tokens: req.max_tokens };
  if (req.system !== undefined) {
    const system = decodeSystem(req.system);
    if (system.length > 0) out.system = system;
  }
  if (req.tools) {
    const tools = decodeTools(req.tools);
    if (tools.length > 0) out.tools = tools;
  }
  if (req.tool_choice) {
    if (out.tools) out.tool_choice = decodeToolChoice(req.tool_choice);
    if (req.tool_choice.disable_parallel_tool_use !== undefined) out.parallel_tool_calls = !req.tool_choice.disable_parallel_tool_use;
  }
  if (req.stop_sequences && req.stop_sequences.length > 0) out.stop = req.stop_sequences;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  const reasoning = decodeReasoning(req);
  if (reasoning) out.reasoning = reasoning;
  const format = req.output_config?.format ?? req.output_format;
  if (format) out.response_format = { type: 'json_schema', name: 'response', schema: format.schema };
  if (req.stream !== undefined) out.stream = req.stream;
  if (typeof req.metadata?.user_id === 'string') out.user = req.metadata.user_id;
  return out;
}
