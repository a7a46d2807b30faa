// TypeBox schemas of the logs and usage endpoints: querystrings and responses. They validate
// requests and document the API in /api/openapi.json.
import { Type, type TSchema } from '@sinclair/typebox';

const NullableString = Type.Union([Type.String(), Type.Null()]);
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const UsageEventSchema = Type.Object({
  request_id: Type.String(),
  started_at: Type.String({ format: 'date-time' }),
  finished_at: Type.String({ format: 'date-time' }),
  relay_key_id: NullableString,
  relay_key_prefix: NullableString,
  policy_id: NullableString,
  model_requested: NullableString,
  model_id: NullableString,
  model_slug: NullableString,
  host_id: NullableString,
  host_key_id: NullableString,
  provider_id: NullableString,
  upstream_model: NullableString,
  inbound_shape: Type.String(),
  upstream_shape: NullableString,
  status: Type.Integer(),
  error_code: NullableString,
  stream: Type.Boolean(),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cache_read_tokens: Type.Integer(),
  cache_write_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  cost: Nullable(Type.Number()),
  currency: NullableString,
  latency_ms: Type.Number(),
  ttfb_ms: Nullable(Type.Number()),
  attempts: Type.Integer(),
  client_aborted: Type.Boolean(),
  client: NullableString,
  extras: Type.Record(Type.String(), Type.String()),
  client_request_id: Type.Optional(Nullable(Type.String({ description: "The client's own x-request-id, when it sent a valid one." }))),
  upstream_request_id: Type.Optional(Nullable(Type.String({ description: "The upstream's id for its answer (its x-request-id or request-id header): quote it to the vendor." }))),
}, { description: 'One finished request.' });

const SkippedSchema = Type.Optional(Type.Array(Type.Object({
  backend: Type.String(),
  code: Type.String(),
  message: Type.String(),
}), { description: 'Loaded log backends this answer could not cover (not the selected one, whose failure fails the read), and why. Absent when every backend answered.' }));

export const LogDetailSchema = Type.Intersect([
  UsageEventSchema,
  Type.Object({
    request_body: Type.Optional(Type.String({ description: 'Captured request body (payload logging).' })),
    response_body: Type.Optional(Type.String({ description: 'Captured response body, as streamed.' })),
    request_truncated: Type.Optional(Type.Boolean({ description: 'True when the request body exceeded maxBytes.' })),
    response_truncated: Type.Optional(Type.Boolean({ description: 'True when the response body exceeded maxBytes.' })),
    request_headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    response_headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    payload_withheld: Type.Optional(Type.Literal('admin_only', {
      description: 'Set for a viewer: captured bodies and headers are left out (admins only, unless settings payload-logging viewersReadPayloads).',
    })),
    skipped: SkippedSchema,
  }),
], { description: 'One request, with its captured payload when payload logging captured it.' });

export const UsageTotalsSchema = Type.Object({
  requests: Type.Integer(),
  errors: Type.Integer({ description: 'Requests with status >= 400.' }),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cache_read_tokens: Type.Integer(),
  cache_write_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  cost: Type.Number({ description: 'The priced requests\' costs added up: in more than one currency when they were priced so (see the summary\'s costs, or a timeseries\' costCurrency).' }),
});

const CurrencyCostSchema = Type.Object({ currency: Type.String(), cost: Type.Number() });

const CostsSchema = Type.Array(CurrencyCostSchema, {
  description: 'The cost in each currency requests were priced in, the costliest first: totals.cost adds these when there are several.',
});

export const FilterQuerySchema = {
  policyId: Type.Optional(Type.String({ minLength: 1, description: 'Only events of this policy id.' })),
  relayKeyId: Type.Optional(Type.String({ minLength: 1, description: 'Only events of this relay key id.' })),
  modelId: Type.Optional(Type.String({ minLength: 1, description: 'Only events of this model id.' })),
  sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Only events of this agent session: a Codex thread-id or a Claude Code session id.' })),
  status: Type.Optional(Type.String({ description: 'HTTP status: exact (200), a comparison (>=400, >400, <500, <=499) or a class (4xx, 5xx).', examples: ['>=400'] })),
  since: Type.Optional(Type.String({ description: 'Relative window ending now: 30m, 24h, 7d.', examples: ['24h'] })),
  from: Type.Optional(Type.String({ description: 'Start of the window, inclusive (ISO 8601 date-time).' })),
  to: Type.Optional(Type.String({ description: 'End of the window, exclusive (ISO 8601 date-time).' })),
};

export const ListQuerySchema = Type.Object({
  ...FilterQuerySchema,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Page size.' })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page.' })),
}, { additionalProperties: false });

export const ListResponseSchema = Type.Object({
  items: Type.Array(UsageEventSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next (older) page; null on the last page.' }),
  skipped: SkippedSchema,
});

export const SummaryQuerySchema = Type.Object({
  ...FilterQuerySchema,
  groupBy: Type.Optional(Type.Union([Type.Literal('model'), Type.Literal('relay_key'), Type.Literal('policy'), Type.Literal('status')])),
}, { additionalProperties: false });

export const SummaryResponseSchema = Type.Object({
  from: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  totals: UsageTotalsSchema,
  costs: CostsSchema,
  groups: Type.Optional(Type.Array(Type.Object({
    key: NullableString,
    totals: UsageTotalsSchema,
    costs: Type.Optional(Type.Array(CurrencyCostSchema, {
      description: "The group's cost in each currency, the costliest first; only when the window is priced in more than one (totals.cost then adds amounts in different currencies). Empty for a group with no priced request.",
    })),
  }))),
  skipped: SkippedSchema,
});

export const TimeseriesQuerySchema = Type.Object({
  ...FilterQuerySchema,
  bucket: Type.Optional(Type.String({ default: '1h', description: 'Bucket size: 1m, 5m, 1h, 1d, ...' })),
  groupBy: Type.Optional(Type.Union([Type.Literal('model'), Type.Literal('relay_key')])),
  costCurrency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', description: 'Each point\'s cost is that of the requests priced in this currency (ISO 4217 code); its requests and tokens stay those of every currency.' })),
}, { additionalProperties: false });

export const TimeseriesResponseSchema = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  bucketSeconds: Type.Integer(),
  costCurrency: Type.Union([Type.String(), Type.Null()], { description: 'The currency of each point\'s cost when costCurrency was asked; null: costs added over every currency.' }),
  points: Type.Array(Type.Object({
    t: Type.String({ format: 'date-time', description: 'Bucket start.' }),
    key: Type.Optional(NullableString),
    totals: UsageTotalsSchema,
  })),
  skipped: SkippedSchema,
});

export const SessionSchema = Type.Object({
  session_id: Type.String({ description: "Codex's thread-id, or Claude Code's session id. The id is the client's choice: sessions of different relay keys with one id are different sessions." }),
  relay_key_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The relay key that made it: sessions are grouped by relay key and session id. Null for requests made with no key, and in a session page without relayKeyId whose id several keys used (its `sessions` then lists each).',
  }),
  relay_key_prefix: Type.Union([Type.String(), Type.Null()], { description: "That key's display prefix." }),
  client: NullableString,
  first_started_at: Type.String({ format: 'date-time' }),
  last_finished_at: Type.String({ format: 'date-time' }),
  duration_ms: Type.Number({ description: 'From the start of its first request to the end of its last.' }),
  turns: Type.Integer({ description: 'Requests (model calls) in the session.' }),
  models: Type.Array(Type.String(), { description: 'The models it used, sorted.' }),
  currencies: Type.Array(Type.String(), { description: 'The currencies its requests were priced in (that of totals.cost), sorted; none when none was priced. With more than one, totals.cost adds amounts in different currencies.' }),
  costs: Type.Optional(Type.Array(CurrencyCostSchema, {
    description: "Its cost in each currency, the costliest first; only when priced in more than one (totals.cost then adds amounts in different currencies), and when the usage backend splits it (Relay's backends do).",
  })),
  totals: UsageTotalsSchema,
  cache_hit_ratio: Nullable(Type.Number({ description: 'Prompt tokens read from the cache over all prompt tokens.' })),
}, { description: 'One agent session (a Codex thread, a Claude Code session) of one relay key, its requests added up.' });

export const SessionsQuerySchema = Type.Object({
  ...FilterQuerySchema,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Most sessions returned.' })),
  sort: Type.Optional(Type.Union([Type.Literal('cost'), Type.Literal('recent')], { default: 'cost', description: 'cost: the costliest first (by input and output tokens when the sessions listed are priced in more than one currency: their costs do not compare); recent: the last active first.' })),
}, { additionalProperties: false });

export const SessionsResponseSchema = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  sessions: Type.Array(SessionSchema),
  skipped: SkippedSchema,
});

export const SessionParamsSchema = Type.Object({ sessionId: Type.String({ minLength: 1, maxLength: 256 }) });

export const SessionQuerySchema = Type.Object({
  relayKeyId: Type.Optional(Type.String({ minLength: 1, description: "Only this relay key's session with the id (its relay_key_id in the list). Without it, every request with the id, whichever key made it." })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Requests per page.' })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page.' })),
}, { additionalProperties: false });

export const SessionResponseSchema = Type.Object({
  session: SessionSchema,
  sessions: Type.Array(SessionSchema, {
    description: 'Each relay key\'s session with this id (only the one with relayKeyId): more than one when several keys sent the id, and `session` then adds them up.',
  }),
  costs: Type.Optional(Type.Array(CurrencyCostSchema, {
    description: "The session's cost in each currency, the costliest first; only when it was priced in more than one (session.totals.cost then adds amounts in different currencies).",
  })),
  items: Type.Array(UsageEventSchema, { description: "The session's requests, newest first." }),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  skipped: SkippedSchema,
});

export const RequestIdParamsSchema = Type.Object({ requestId: Type.String({ minLength: 1, maxLength: 200 }) });
