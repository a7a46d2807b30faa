// OpenAI Responses request JSON -> canonical request (the inbound side of 'openai.responses').
// Codex sends this shape (CLIENTS.md): its system prompt as the first developer message,
// custom tools (apply_patch with a Lark grammar), namespace groupings, server-side tools,
// and its history as items (function_call, custom_tool_call, reasoning with encrypted_content).
import { RelayError, Type, validateBody, type Static } from '../../../core/plugin-api.ts';
import type { CanonicalRequest, ContentPart, Message, ReasoningPart, ResponseFormat, TextPart, Tool, ToolChoice, ToolResultPart } from '../../../core/plugin-api/canonical.ts';
import { imageFromUrl } from './chat-request.ts';
import { TokenCount, unsupportedContent } from '../../../core/plugin-api/canonical.ts';
import { documentFromFile } from './file-parts.ts';
import { flattenedName } from './namespace-tools.ts';
import { effortFromOpenAI } from './reasoning-effort.ts';
import { StoreFlag } from './store-flag.ts';
import { openReasoning } from './reasoning-envelope.ts';
import { webSearchPart } from './web-search-item.ts';
import { refuseModeration } from './moderation.ts';

/** What the Responses inbound decoder drops, and why. Pinned by test/translation/conformance.test.ts. */
export const RESPONSES_REQUEST_DROPPED = {
  'server-side tools (tool_search, file_search, code_interpreter, computer_use, image_generation, local_shell, shell, mcp, ...)':
    'they run inside OpenAI; on a vendor-a upstream the request is forwarded as sent (passthrough), elsewhere they are dropped and named `tools.<type>`',
  'web_search and web_search_preview tools': 'mapped to the canonical web search (allowed domains, user location, search_context_size); external_web_access and search_content_types have no canonical field: named `tools.web_search.<field>`',
  'web_search_call items of the history': 'mapped to canonical web searches (another vendor\'s search comes back from the envelope in its id); an upstream of another vendor names them `history.web_search_call`',
  'tool_choice naming a server-side tool, allowed_tools subsets': 'become "auto" / the allowed_tools mode; named `tool_choice`, `tool_choice.tools`',
  'input items of other types (*_call of server tools, compaction, ...)': 'no canonical form; they record server-side work the other vendors cannot redo; named `input.<type>`',
  'include, prompt_cache_key, background, truncation, service_tier':
    'no effect on the answer\'s content on another vendor (listed in x-relay-dropped); previous_response_id and item_reference resolve from Relay\'s Responses state (responses-state.ts), store is honoured there',
  'text.verbosity, top_logprobs, max_tool_calls, client_metadata': 'no canonical field',
  'prompt_cache_options, prompt_cache_retention, context_management, stream_options': 'OpenAI\'s cache, compaction and stream padding settings, no canonical field; each is named in x-relay-dropped',
  moderation: 'refused with a 400 naming it: an answer without the screening asked for is not one to serve in silence',
  'any other top-level member': 'named in x-relay-dropped (a plain identifier by its name, others as `other members`)',
  'namespace descriptions': 'prefixed to each member tool description',
} as const;

const Detail = Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')]);
const Typed = Type.Object({ type: Type.Optional(Type.String()) });
const InputText = Type.Object({ type: Type.String(), text: Type.String() });
const InputFile = Type.Object({
  type: Type.Literal('input_file'),
  file_data: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  file_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  file_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  filename: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const InputImage = Type.Object({
  type: Type.Literal('input_image'),
  image_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  detail: Type.Optional(Detail),
});
const Refusal = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });
const MessageItem = Type.Object({
  type: Type.Optional(Type.Literal('message')),
  role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system'), Type.Literal('developer')]),
  content: Type.Union([Type.String(), Type.Array(Typed)]),
});
const FunctionCallItem = Type.Object({
  type: Type.Literal('function_call'),
  call_id: Type.String(),
  name: Type.String({ minLength: 1 }),
  namespace: Type.Optional(Type.String()),
  arguments: Type.String(),
});
const CustomCallItem = Type.Object({
  type: Type.Literal('custom_tool_call'),
  call_id: Type.String(),
  name: Type.String({ minLength: 1 }),
  namespace: Type.Optional(Type.String()),
  input: Type.String(),
});
const OutputItem = Type.Object({
  type: Type.Union([Type.Literal('function_call_output'), Type.Literal('custom_tool_call_output')]),
  call_id: Type.String(),
  output: Type.Union([Type.String(), Type.Array(Typed)]),
});
const ReasoningItem = Type.Object({
  type: Type.Literal('reasoning'),
  id: Type.Optional(Type.String()),
  summary: Type.Optional(Type.Array(Type.Object({ text: Type.String() }))),
  content: Type.Optional(Type.Union([Type.Array(Type.Object({ text: Type.String() })), Type.Null()])),
  encrypted_content: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

const Domains = Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()]));
const Place = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const WebSearchDef = Type.Object({
  type: Type.String(),
  filters: Type.Optional(Type.Union([Type.Object({ allowed_domains: Domains }), Type.Null()])),
  user_location: Type.Optional(Type.Union([Type.Object({ city: Place, region: Place, country: Place, timezone: Place }), Type.Null()])),
  search_context_size: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')])),
});
/** The Responses tool types of OpenAI's web search. */
export const WEB_SEARCH_TOOL_TYPES: ReadonlySet<string> = new Set(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']);

const WebSearchCallItem = Type.Object({
  type: Type.Literal('web_search_call'),
  id: Type.String(),
  status: Type.Optional(Type.String()),
  action: Type.Optional(Type.Object({
    type: Type.Optional(Type.String()),
    query: Type.Optional(Type.String()),
    queries: Type.Optional(Type.Array(Type.String())),
    sources: Type.Optional(Type.Array(Type.Object({ url: Type.String() }))),
  })),
});

const FunctionToolDef = Type.Object({
  type: Type.Literal('function'),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
});
const CustomToolDef = Type.Object({
  type: Type.Literal('custom'),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  format: Type.Optional(Type.Union([
    Type.Object({ type: Type.Literal('text') }),
    Type.Object({ type: Type.Literal('grammar'), syntax: Type.String(), definition: Type.String() }),
  ])),
});
const NamespaceDef = Type.Object({
  type: Type.Literal('namespace'),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  tools: Type.Array(Typed),
});

const ToolChoiceDef = Type.Union([
  Type.Literal('none'), Type.Literal('auto'), Type.Literal('required'),
  Type.Object({ type: Type.String(), name: Type.Optional(Type.String()), mode: Type.Optional(Type.String()) }),
]);

/** A request's `input`: a string (one user message) or its items; responses-state.ts checks it with this before it expands it. */
export const ResponsesInput = Type.Union([Type.String(), Type.Array(Typed)]);

const ResponsesRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  input: Type.Optional(ResponsesInput),
  instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  tools: Type.Optional(Type.Array(Typed)),
  tool_choice: Type.Optional(ToolChoiceDef),
  parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  max_output_tokens: Type.Optional(Type.Union([TokenCount(1), Type.Null()])),
  temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
  top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
  reasoning: Type.Optional(Type.Union([Type.Object({
    effort: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    summary: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }), Type.Null()])),
  text: Type.Optional(Type.Object({
    format: Type.Optional(Type.Union([
      Type.Object({ type: Type.Literal('text') }),
      Type.Object({ type: Type.Literal('json_object') }),
      Type.Object({
        type: Type.Literal('json_schema'),
        name: Type.String({ minLength: 1 }),
        schema: Type.Record(Type.String(), Type.Unknown()),
        description: Type.Optional(Type.String()),
        strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      }),
    ])),
  })),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  store: Type.Optional(StoreFlag),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  user: Type.Optional(Type.String()),
  safety_identifier: Type.Optional(Type.String()),
});
type ResponsesRequest = Static<typeof ResponsesRequest>;
/** The members the decoder reads. */
export const RESPONSES_REQUEST_MEMBERS: readonly string[] = Object.keys(ResponsesRequest.properties);

function messageParts(item: Static<typeof MessageItem>, pointer: string, model: string): ContentPart[] {
  if (typeof item.content === 'string') return item.content === '' ? [] : [{ type: 'text', text: item.content }];
  const out: ContentPart[] = [];
  item.content.forEach((part, i) => {
    const at = `${pointer}/content/${i}`;
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        out.push({ type: 'text', text: validateBody<Static<typeof InputText>>(InputText, part, at).text });
        return;
      case 'refusal':
        out.push({ type: 'refusal', text: validateBody<Static<typeof Refusal>>(Refusal, part, at).refusal });
        return;
      case 'input_image': {
        const image = validateBody<Static<typeof InputImage>>(InputImage, part, at);
        if (typeof image.image_url === 'string' && image.image_url !== '') out.push(imageFromUrl(image.image_url, image.detail));
        else throw unsupportedContent(`the input_image at ${at}`, model, 'an image by file id names a file in OpenAI\'s store; send its URL or bytes instead');
        return;
      }
      case 'input_file':
        out.push(documentFromFile(validateBody<Static<typeof InputFile>>(InputFile, part, at), at));
        return;
      default:
        throw unsupportedContent(`the ${String(part.type)} part at ${at}`, model, 'it has no form other vendors take');
    }
  });
  return out;
}

function outputContent(output: Static<typeof OutputItem>['output'], pointer: string, model: string): ToolResultPart['content'] {
  if (typeof output === 'string') return output === '' ? [] : [{ type: 'text', text: output }];
  const out: ToolResultPart['content'] = [];
  output.forEach((part, i) => {
    const at = `${pointer}/output/${i}`;
    if (part.type === 'input_text' || part.type === 'output_text') out.push({ type: 'text', text: validateBody<Static<typeof InputText>>(InputText, part, at).text });
    else if (part.type === 'input_image') {
      const image = validateBody<Static<typeof InputImage>>(InputImage, part, at);
      if (typeof image.image_url === 'string' && image.image_url !== '') out.push(imageFromUrl(image.image_url, image.detail));
      else throw unsupportedContent(`the input_image at ${at}`, model, 'an image by file id names a file in OpenAI\'s store; send its URL or bytes instead');
    } else throw unsupportedContent(`the ${String(part.type)} part at ${at}`, model, 'a tool result carries text and images only once translated');
  });
  return out;
}

function reasoningPart(item: Static<typeof ReasoningItem>): ReasoningPart {
  const summary = (item.summary ?? []).map((s) => s.text);
  const content = (item.content ?? []).map((c) => c.text);
  const text = (summary.length > 0 ? summary : content).join('\n\n');
  const part: ReasoningPart = { type: 'reasoning' };
  if (text !== '') part.text = text;
  if (typeof item.encrypted_content === 'string' && item.encrypted_content !== '') Object.assign(part, openReasoning(item.encrypted_content));
  else part.origin = 'openai';
  if (item.id !== undefined) part.id = item.id;
  return part;
}

/** Appends a part to the last message when it has the same role (one assistant turn = one message). */
function append(messages: Message[], role: Message['role'], part: ContentPart, merge: (last: Message) => boolean): void {
  const last = messages[messages.length - 1];
  if (last && last.role === role && merge(last)) last.content.push(part);
  else messages.push({ role, content: [part] });
}
const onlyToolResults = (m: Message): boolean => m.content.every((p) => p.type === 'tool_result');
const assistantTurn = (m: Message): boolean => m.role === 'assistant';

function decodeInput(input: ResponsesRequest['input'], model: string): { system: TextPart[]; messages: Message[] } {
  const system: TextPart[] = [];
  const messages: Message[] = [];
  if (input === undefined) return { system, messages };
  if (typeof input === 'string') return { system, messages: [{ role: 'user', content: [{ type: 'text', text: input }] }] };
  input.forEach((item, i) => {
    const at = `/input/${i}`;
    switch (item.type ?? 'message') {
      case 'message': {
        const m = validateBody<Static<typeof MessageItem>>(MessageItem, item, at);
        const parts = messageParts(m, at, model);
        if (m.role === 'system' || m.role === 'developer') {
          const texts = parts.filter((p): p is TextPart => p.type === 'text');
          if (messages.length === 0) system.push(...texts);
          else if (texts.length > 0) messages.push({ role: 'system', content: texts });
        } else if (m.role === 'assistant') {
          for (const part of parts) append(messages, 'assistant', part, assistantTurn);
        } else if (parts.length > 0) {
          messages.push({ role: 'user', content: parts });
        }
        return;
      }
      case 'function_call': {
        const c = validateBody<Static<typeof FunctionCallItem>>(FunctionCallItem, item, at);
        const name = c.namespace ? flattenedName(c.namespace, c.name) : c.name;
        append(messages, 'assistant', { type: 'tool_call', id: c.call_id, name, arguments: c.arguments, tool_kind: 'function' }, assistantTurn);
        return;
      }
      case 'custom_tool_call': {
        const c = validateBody<Static<typeof CustomCallItem>>(CustomCallItem, item, at);
        const name = c.namespace ? flattenedName(c.namespace, c.name) : c.name;
        append(messages, 'assistant', { type: 'tool_call', id: c.call_id, name, arguments: c.input, tool_kind: 'custom' }, assistantTurn);
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const o = validateBody<Static<typeof OutputItem>>(OutputItem, item, at);
        append(messages, 'user', { type: 'tool_result', tool_call_id: o.call_id, content: outputContent(o.output, at, model) }, onlyToolResults);
        return;
      }
      case 'reasoning': {
        const r = validateBody<Static<typeof ReasoningItem>>(ReasoningItem, item, at);
        append(messages, 'assistant', reasoningPart(r), assistantTurn);
        return;
      }
      case 'web_search_call':
        append(messages, 'assistant', webSearchPart(validateBody<Static<typeof WebSearchCallItem>>(WebSearchCallItem, item, at)), assistantTurn);
        return;
      case 'item_reference':
        // Resolved from Relay's store before decoding (responses-state.ts): one left here has nothing to name.
        throw new RelayError('RELAY_ERR_BAD_REQUEST', `The item_reference at ${at} cannot be resolved here: Relay's Responses state is not in use for this request.`, { field: at });
      default:
        return; // server tool calls, compaction, ...: dropped by rule
    }
  });
  return { system, messages };
}

function functionTool(def: Static<typeof FunctionToolDef>, name: string, prefix?: string): Tool {
  const description = [prefix, def.description ?? undefined].filter((d): d is string => typeof d === 'string' && d !== '').join('\n\n');
  return {
    type: 'function', name,
    ...(description === '' ? {} : { description }),
    ...(def.parameters ? { parameters: def.parameters } : {}),
    ...(typeof def.strict === 'boolean' ? { strict: def.strict } : {}),
  };
}

function customTool(def: Static<typeof CustomToolDef>, name: string, prefix?: string): Tool {
  const description = [prefix, def.description].filter((d): d is string => typeof d === 'string' && d !== '').join('\n\n');
  return {
    type: 'custom', name,
    ...(description === '' ? {} : { description }),
    ...(def.format === undefined ? {} : { format: def.format.type === 'text' ? { type: 'text' as const } : { type: 'grammar' as const, syntax: def.format.syntax, definition: def.format.definition } }),
  };
}

function decodeTools(raw: NonNullable<ResponsesRequest['tools']>): Tool[] {
  const tools: Tool[] = [];
  raw.forEach((tool, i) => {
    const at = `/tools/${i}`;
    if (tool.type === 'function') {
      const f = validateBody<Static<typeof FunctionToolDef>>(FunctionToolDef, tool, at);
      tools.push(functionTool(f, f.name));
    } else if (tool.type === 'custom') {
      const c = validateBody<Static<typeof CustomToolDef>>(CustomToolDef, tool, at);
      tools.push(customTool(c, c.name));
    } else if (tool.type === 'namespace') {
      const ns = validateBody<Static<typeof NamespaceDef>>(NamespaceDef, tool, at);
      ns.tools.forEach((member, j) => {
        const mat = `${at}/tools/${j}`;
        if (member.type === 'custom') {
          const c = validateBody<Static<typeof CustomToolDef>>(CustomToolDef, member, mat);
          tools.push(customTool(c, flattenedName(ns.name, c.name), ns.description));
        } else {
          const f = validateBody<Static<typeof FunctionToolDef>>(FunctionToolDef, member, mat);
          tools.push(functionTool(f, flattenedName(ns.name, f.name), ns.description));
        }
      });
    }
    else if (WEB_SEARCH_TOOL_TYPES.has(String(tool.type))) tools.push(webSearchTool(validateBody<Static<typeof WebSearchDef>>(WebSearchDef, tool, at)));
    // anything else is a server-side tool: dropped by rule
  });
  return tools;
}

function webSearchTool(def: Static<typeof WebSearchDef>): Tool {
  const tool: Extract<Tool, { type: 'web_search' }> = { type: 'web_search' };
  if (def.filters?.allowed_domains) tool.allowed_domains = def.filters.allowed_domains;
  const place = Object.entries(def.user_location ?? {}).filter(([k, v]) => k !== 'type' && typeof v === 'string');
  if (place.length > 0) tool.user_location = Object.fromEntries(place);
  if (def.search_context_size !== undefined) tool.search_context_size = def.search_context_size;
  return tool;
}

function decodeToolChoice(choice: Static<typeof ToolChoiceDef>): ToolChoice {
  if (typeof choice === 'string') return choice;
  if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') return { type: 'tool', name: choice.name };
  if (choice.type === 'allowed_tools' && (choice.mode === 'auto' || choice.mode === 'required')) return choice.mode;
  return 'auto';
}

function decodeFormat(format: NonNullable<NonNullable<ResponsesRequest['text']>['format']>): ResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema', name: format.name, schema: format.schema,
    ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
    ...(format.description === undefined ? {} : { description: format.description }),
  };
}

export function decodeResponsesRequest(body: unknown): CanonicalRequest {
  const req = validateBody<ResponsesRequest>(ResponsesRequest, body);
  // A stored conversation Relay did not resolve (see responses-state.ts) is refused, never dropped.
  const conversation = ['previous_response_id', 'conversation', 'prompt'].find((k) => (body as Record<string, unknown>)[k] !== undefined && (body as Record<string, unknown>)[k] !== null);
  if (conversation) throw new RelayError('RELAY_ERR_BAD_REQUEST', `${conversation} names state Relay cannot resolve on a translated route; send the conversation as input items.`, { field: conversation });
  refuseModeration(body as Record<string, unknown>, req.model);
  const { system, messages } = decodeInput(req.input, req.model);
  const out: CanonicalRequest = { model: req.model, messages };
  const allSystem = [
    ...(typeof req.instructions === 'string' && req.instructions !== '' ? [{ type: 'text' as const, text: req.instructions }] : []),
    ...system,
  ];
  if (allSystem.length > 0) out.system = allSystem;
  if (req.tools) {
    const tools = decodeTools(req.tools);
    if (tools.length > 0) out.tools = tools;
  }
  if (req.tool_choice !== undefined && out.tools) out.tool_choice = decodeToolChoice(req.tool_choice);
  if (typeof req.parallel_tool_calls === 'boolean') out.parallel_tool_calls = req.parallel_tool_calls;
  if (typeof req.max_output_tokens === 'number') out.max_output_tokens = req.max_output_tokens;
  if (typeof req.temperature === 'number') out.temperature = req.temperature;
  if (typeof req.top_p === 'number') out.top_p = req.top_p;
  if (req.reasoning) {
    const reasoning: NonNullable<CanonicalRequest['reasoning']> = {};
    if (typeof req.reasoning.effort === 'string') reasoning.effort = effortFromOpenAI(req.reasoning.effort, '/reasoning/effort');
    if (typeof req.reasoning.summary === 'string') reasoning.summary = true;
    if (Object.keys(reasoning).length > 0) out.reasoning = reasoning;
  }
  if (req.text?.format) out.response_format = decodeFormat(req.text.format);
  if (typeof req.stream === 'boolean') out.stream = req.stream;
  if (req.metadata) out.metadata = req.metadata;
  const user = req.safety_identifier ?? req.user;
  if (user !== undefined) out.user = user;
  return out;
}
