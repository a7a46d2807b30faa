// The canonical, provider-neutral shape (DESIGN.md section 4). It is the wire shape of
// POST /v1/generate and the shape every translation passes through. JSON, snake_case.
//
// Conventions every converter keeps:
// - usage.input_tokens counts every prompt token, cached or not (OpenAI's meaning);
//   cache_read_tokens and cache_write_tokens are the parts of it served from or written
//   to a prompt cache. output_tokens includes reasoning_tokens.
// - tool_call.arguments is a string: JSON text for function tools, free text for custom tools
//   ('' for a custom call without input, from every upstream).
// - reasoning parts carry `origin` (the vendor adapter id that produced them); signed or
//   encrypted reasoning is sent back only to an upstream of the same origin. So do web search
//   calls (`raw`: the vendor's own blocks or item, which only it can read back).
import { Type, type Static } from '@sinclair/typebox';

/**
 * The largest token count a request names (max_tokens and its kin: vendors read 32-bit integers)
 * or an answer reports (token-count.ts): it fits every usage backend's column, and sums stay exact.
 */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;
/** A token count in a request schema: an integer from `minimum` to MAX_TOKEN_COUNT (a 400 naming the field otherwise). */
export const TokenCount = (minimum: number) => Type.Integer({ minimum, maximum: MAX_TOKEN_COUNT });

const Json = Type.Unknown();

/** A source the text cites (Anthropic web_search_result_location, OpenAI url_citation). */
export const Citation = Type.Object({
  type: Type.Literal('url_citation'),
  url: Type.String(),
  title: Type.Optional(Type.String()),
  /** The cited passage (Anthropic's cited_text). */
  cited_text: Type.Optional(Type.String()),
  /** Where the cited span sits in the part's text; absent when the whole part cites it (Anthropic). */
  start_index: Type.Optional(Type.Integer({ minimum: 0 })),
  end_index: Type.Optional(Type.Integer({ minimum: 0 })),
}, { additionalProperties: false });

export const TextPart = Type.Object({
  type: Type.Literal('text'),
  text: Type.String(),
  citations: Type.Optional(Type.Array(Citation)),
}, { additionalProperties: false });

export const ImagePart = Type.Object({
  type: Type.Literal('image'),
  source: Type.Union([
    Type.Object({ type: Type.Literal('url'), url: Type.String() }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('base64'), media_type: Type.String(), data: Type.String() }, { additionalProperties: false }),
  ]),
  detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])),
}, { additionalProperties: false });

/** A file the model reads (a PDF, a text document): bytes, a URL the upstream fetches, text, or a vendor file id. */
export const DocumentPart = Type.Object({
  type: Type.Literal('document'),
  source: Type.Union([
    Type.Object({ type: Type.Literal('base64'), media_type: Type.String(), data: Type.String() }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('url'), url: Type.String() }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('text'), text: Type.String() }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('file_id'), file_id: Type.String() }, { additionalProperties: false }),
  ]),
  filename: Type.Optional(Type.String()),
}, { additionalProperties: false });

export const ToolCallPart = Type.Object({
  type: Type.Literal('tool_call'),
  id: Type.String(),
  name: Type.String(),
  /** JSON text for function tools, free text for custom tools ('' when a custom call has no input). */
  arguments: Type.String(),
  /** `custom` for freeform tools (Responses custom tools such as apply_patch). */
  tool_kind: Type.Optional(Type.Union([Type.Literal('function'), Type.Literal('custom')])),
}, { additionalProperties: false });

export const ToolResultPart = Type.Object({
  type: Type.Literal('tool_result'),
  tool_call_id: Type.String(),
  content: Type.Array(Type.Union([TextPart, ImagePart])),
  is_error: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

export const ReasoningPart = Type.Object({
  type: Type.Literal('reasoning'),
  text: Type.Optional(Type.String()),
  /** Signature over the reasoning (Anthropic thinking blocks). */
  signature: Type.Optional(Type.String()),
  /** Opaque encrypted reasoning (OpenAI encrypted_content, Anthropic redacted_thinking data). */
  encrypted: Type.Optional(Type.String()),
  /** Adapter id of the vendor that produced it; signed/encrypted data goes back only there. */
  origin: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
}, { additionalProperties: false });

export const RefusalPart = Type.Object({
  type: Type.Literal('refusal'),
  text: Type.String(),
}, { additionalProperties: false });

export const WebSearchSource = Type.Object({
  url: Type.String(),
  title: Type.Optional(Type.String()),
  page_age: Type.Optional(Type.String()),
}, { additionalProperties: false });

/** incomplete: the answer broke off before the search's input was whole, so what it searched for is not known. */
export const WebSearchStatus = Type.Union([Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('incomplete')]);

/** A web search the upstream ran itself (Anthropic server_tool_use + web_search_tool_result, OpenAI web_search_call). */
export const WebSearchCallPart = Type.Object({
  type: Type.Literal('web_search_call'),
  id: Type.String(),
  query: Type.Optional(Type.String()),
  sources: Type.Optional(Type.Array(WebSearchSource)),
  /** in_progress: the search had not answered when the turn paused (Anthropic pause_turn). */
  status: Type.Optional(WebSearchStatus),
  /** Adapter id of the vendor that ran it; `raw` goes back only there. */
  origin: Type.Optional(Type.String()),
  /** The vendor's own blocks or item (Anthropic's results are encrypted), replayed verbatim to `origin`. */
  raw: Type.Optional(Json),
}, { additionalProperties: false });

export const ContentPart = Type.Union([TextPart, ImagePart, DocumentPart, ToolCallPart, ToolResultPart, ReasoningPart, RefusalPart, WebSearchCallPart]);

export const Role = Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant')]);

export const Message = Type.Object({
  role: Role,
  content: Type.Array(ContentPart),
}, { additionalProperties: false });

export const FunctionTool = Type.Object({
  type: Type.Literal('function'),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(Type.Record(Type.String(), Json)),
  strict: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

export const CustomTool = Type.Object({
  type: Type.Literal('custom'),
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  format: Type.Optional(Type.Union([
    Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('grammar'), syntax: Type.String(), definition: Type.String() }, { additionalProperties: false }),
  ])),
}, { additionalProperties: false });

/** The upstream's own web search (Responses web_search, Anthropic web_search_20250305, Chat web_search_options). */
export const WebSearchTool = Type.Object({
  type: Type.Literal('web_search'),
  /** Anthropic only: searches per request. */
  max_uses: Type.Optional(Type.Integer({ minimum: 1 })),
  allowed_domains: Type.Optional(Type.Array(Type.String())),
  /** Anthropic only. */
  blocked_domains: Type.Optional(Type.Array(Type.String())),
  user_location: Type.Optional(Type.Object({
    city: Type.Optional(Type.String()),
    region: Type.Optional(Type.String()),
    country: Type.Optional(Type.String()),
    timezone: Type.Optional(Type.String()),
  }, { additionalProperties: false })),
  /** OpenAI only. */
  search_context_size: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')])),
}, { additionalProperties: false });

export const Tool = Type.Union([FunctionTool, CustomTool, WebSearchTool]);

export const ToolChoice = Type.Union([
  Type.Literal('auto'),
  Type.Literal('none'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('tool'), name: Type.String() }, { additionalProperties: false }),
]);

export const ReasoningEffort = Type.Union([
  Type.Literal('none'), Type.Literal('minimal'), Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('xhigh'),
]);

export const ResponseFormat = Type.Union([
  Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
  Type.Object({
    type: Type.Literal('json_schema'),
    name: Type.String(),
    schema: Type.Record(Type.String(), Json),
    strict: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String()),
  }, { additionalProperties: false }),
]);

export const CanonicalRequest = Type.Object({
  model: Type.String({ minLength: 1 }),
  system: Type.Optional(Type.Array(TextPart)),
  messages: Type.Array(Message),
  tools: Type.Optional(Type.Array(Tool)),
  tool_choice: Type.Optional(ToolChoice),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  max_output_tokens: Type.Optional(TokenCount(1)),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  stop: Type.Optional(Type.Array(Type.String())),
  reasoning: Type.Optional(Type.Object({
    effort: Type.Optional(ReasoningEffort),
    budget_tokens: Type.Optional(TokenCount(0)),
    summary: Type.Optional(Type.Boolean()),
  }, { additionalProperties: false })),
  response_format: Type.Optional(ResponseFormat),
  stream: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
  user: Type.Optional(Type.String()),
}, { additionalProperties: false, $id: 'CanonicalRequest' });

export const StopReason = Type.Union([
  Type.Literal('end_turn'),
  Type.Literal('max_tokens'),
  Type.Literal('stop_sequence'),
  Type.Literal('tool_use'),
  Type.Literal('content_filter'),
  Type.Literal('refusal'),
  Type.Literal('error'),
  /** The upstream paused a long server-tool loop (Anthropic pause_turn): send the answer back to continue. */
  Type.Literal('pause_turn'),
]);

export const Usage = Type.Object({
  input_tokens: Type.Integer({ minimum: 0 }),
  output_tokens: Type.Integer({ minimum: 0 }),
  cache_read_tokens: Type.Integer({ minimum: 0 }),
  cache_write_tokens: Type.Integer({ minimum: 0 }),
  /** The part of cache_write_tokens written to a 1-hour cache (Anthropic prices it apart); absent when none. */
  cache_write_1h_tokens: Type.Optional(Type.Integer({ minimum: 0 })),
  reasoning_tokens: Type.Integer({ minimum: 0 }),
  /** Searches the upstream ran for the answer (a server-side web search tool), billed per search; absent when none. */
  web_search_requests: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Conditions the upstream priced the answer under, beyond its tokens: `fast` (Anthropic's fast mode), `us_inference` (Anthropic's US-only inference), `priority`, `flex` and `scale` (OpenAI's service tiers); absent when none. */
  price_modifiers: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 8 })),
  /** The model the answer says served it, when that is what prices it: a vendor's own fallback after a refusal (Anthropic's `fallbacks`). */
  model: Type.Optional(Type.String({ maxLength: 256 })),
  /** Why the vendor bills nothing for this answer though it reports tokens: `refusal` (Claude declined before any output); absent when billed. */
  unbilled: Type.Optional(Type.String({ maxLength: 64 })),
}, { additionalProperties: false, $id: 'CanonicalUsage' });

export const CanonicalResponse = Type.Object({
  id: Type.String(),
  model: Type.String(),
  content: Type.Array(ContentPart),
  stop_reason: StopReason,
  stop_sequence: Type.Optional(Type.String()),
  usage: Usage,
}, { additionalProperties: false, $id: 'CanonicalResponse' });

export const CanonicalErrorBody = Type.Object({
  error: Type.Object({
    type: Type.String(),
    code: Type.String(),
    message: Type.String(),
    status: Type.Integer(),
    field: Type.Optional(Type.String()),
  }),
}, { $id: 'CanonicalError' });

/** What a part looks like when it opens in a stream (its deltas follow). */
export const PartStart = Type.Union([
  Type.Object({ type: Type.Literal('text') }),
  Type.Object({ type: Type.Literal('tool_call'), id: Type.String(), name: Type.String(), tool_kind: Type.Optional(Type.Union([Type.Literal('function'), Type.Literal('custom')])) }),
  Type.Object({ type: Type.Literal('reasoning'), origin: Type.Optional(Type.String()), id: Type.Optional(Type.String()), encrypted: Type.Optional(Type.String()) }),
  Type.Object({ type: Type.Literal('refusal') }),
  // A search opens whole, once the upstream has its results (its part_end follows, no deltas).
  WebSearchCallPart,
]);

export const PartDelta = Type.Union([
  Type.Object({ type: Type.Literal('text'), text: Type.String() }),
  Type.Object({ type: Type.Literal('arguments'), text: Type.String() }),
  Type.Object({ type: Type.Literal('reasoning'), text: Type.String() }),
  Type.Object({ type: Type.Literal('signature'), signature: Type.String() }),
  Type.Object({ type: Type.Literal('refusal'), text: Type.String() }),
  Type.Object({ type: Type.Literal('citation'), citation: Citation }),
]);

export const StreamEvent = Type.Union([
  Type.Object({ type: Type.Literal('start'), id: Type.String(), model: Type.String() }),
  Type.Object({ type: Type.Literal('part_start'), index: Type.Integer({ minimum: 0 }), part: PartStart }),
  Type.Object({ type: Type.Literal('delta'), index: Type.Integer({ minimum: 0 }), delta: PartDelta }),
  Type.Object({ type: Type.Literal('part_end'), index: Type.Integer({ minimum: 0 }) }),
  Type.Object({ type: Type.Literal('end'), stop_reason: StopReason, stop_sequence: Type.Optional(Type.String()), usage: Usage }),
  Type.Object({ type: Type.Literal('error'), error: Type.Object({ type: Type.String(), code: Type.String(), message: Type.String(), status: Type.Integer() }) }),
], { $id: 'CanonicalStreamEvent' });

export type Citation = Static<typeof Citation>;
export type TextPart = Static<typeof TextPart>;
export type WebSearchSource = Static<typeof WebSearchSource>;
export type WebSearchCallPart = Static<typeof WebSearchCallPart>;
export type WebSearchTool = Static<typeof WebSearchTool>;
export type ImagePart = Static<typeof ImagePart>;
export type DocumentPart = Static<typeof DocumentPart>;
export type ToolCallPart = Static<typeof ToolCallPart>;
export type ToolResultPart = Static<typeof ToolResultPart>;
export type ReasoningPart = Static<typeof ReasoningPart>;
export type RefusalPart = Static<typeof RefusalPart>;
export type ContentPart = Static<typeof ContentPart>;
export type Role = Static<typeof Role>;
export type Message = Static<typeof Message>;
export type FunctionTool = Static<typeof FunctionTool>;
export type CustomTool = Static<typeof CustomTool>;
export type Tool = Static<typeof Tool>;
export type ToolChoice = Static<typeof ToolChoice>;
export type ReasoningEffort = Static<typeof ReasoningEffort>;
export type ResponseFormat = Static<typeof ResponseFormat>;
export type CanonicalRequest = Static<typeof CanonicalRequest>;
export type StopReason = Static<typeof StopReason>;
export type Usage = Static<typeof Usage>;
export type CanonicalResponse = Static<typeof CanonicalResponse>;
export type CanonicalErrorBody = Static<typeof CanonicalErrorBody>;
export type PartStart = Static<typeof PartStart>;
export type PartDelta = Static<typeof PartDelta>;
export type StreamEvent = Static<typeof StreamEvent>;

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
}

/**
 * Sets the model the answer names (Usage.model) on `usage`, when it is a name a price lookup takes;
 * returns `usage`. In place: a copy per answer showed in profiles of streamed passthrough.
 */
export function setAnswerModel(usage: Usage | null, model: unknown): Usage | null {
  if (usage !== null && typeof model === 'string' && model !== '' && model.length <= 256) usage.model = model;
  return usage;
}
