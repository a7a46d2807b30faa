// The catalog kinds: their spec schemas (DESIGN.md "Fields the spec does not show"),
// which fields reference which kinds, and which fields are write-only or server-set.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ReasoningEffort } from '../canonical/types.ts';
import { CREDENTIAL_HEADERS } from '../http/headers.ts';
import { LongContextRates, PriceModifierFields, RateFields, WebSearchRate } from '../pricing/rates.ts';

const Id = Type.String({ format: 'uuid', description: 'Id (UUID) of the referenced entity.' });

// Bounds on every string, record and array of a spec. Each instance holds the whole catalog in
// memory (core/catalog/snapshot.ts), so an unbounded field lets one write grow every instance's
// heap; the bounds are far above what a real deployment writes, so no real value hits them.
/** A URL: browsers and most servers stop at 2 KiB too. */
export const MAX_URL_LENGTH = 2048;
/** An adapter id, a wire-shape name or an environment variable name. */
export const MAX_NAME_LENGTH = 128;
/** An upstream model name: long ones are paths or ARNs (accounts/x/models/y, arn:aws:bedrock:...). */
export const MAX_UPSTREAM_MODEL_LENGTH = 256;
/** A model's description, shown in client model pickers. */
export const MAX_DESCRIPTION_LENGTH = 4096;
/** A stored host-key value: API keys are under 200 characters; this leaves room for tokens and JSON credentials. */
export const MAX_SECRET_LENGTH = 16_384;
/** Extra headers of a host: names, values (8 KiB, a common server limit on one header) and count. */
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 8192;
/** A header value sealed under the master key: 8 KiB of two-byte characters, base64url, with the seal's framing. */
export const MAX_SEALED_HEADER_VALUE_LENGTH = 22_016;
export const MAX_HOST_HEADERS = 64;
/** What a viewer is shown instead of a host header's value (core/catalog/host-header-sealing.ts). */
export const MASKED_HEADER_VALUE = '********';
/** Wire shapes of a provider: an adapter speaks a handful. */
export const MAX_SHAPES = 32;
/** Hosts one model is bound to. */
export const MAX_MODEL_BINDINGS = 512;
export const MAX_MODEL_FALLBACKS = 8;
/** Models one policy grants by id ('*' grants all without listing them). */
export const MAX_POLICY_MODELS = 5000;
/** Rate limits one policy applies. */
export const MAX_POLICY_RATE_LIMITS = 64;

export const ProviderSpec = Type.Object({
  adapter: Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'Id of a vendor adapter plugin: openai, anthropic, or an in-house one.' }),
  shapes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH }), {
    maxItems: MAX_SHAPES,
    description: 'Narrows the wire shapes this provider\'s upstreams speak (e.g. only openai.chat for a vLLM server). Defaults to every shape the adapter speaks.',
  })),
}, { additionalProperties: false });

export const HostSpec = Type.Object({
  providerId: Id,
  baseUrl: Type.String({
    pattern: '^https?://', maxLength: MAX_URL_LENGTH,
    description: 'Base URL of the upstream, e.g. https://api.openai.com/v1: http or https, with a host, without user:password@ (credentials are host keys), query or fragment (endpoint paths are appended to it).',
  }),
  enabled: Type.Boolean({ default: true }),
  timeoutMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 600_000, description: 'Bound on waiting for response headers (a wait for a free connection included), between body bytes, and between a stream\'s events (keep-alive comments and ping events alone do not hold a stream open past it).' }),
  maxConnections: Type.Optional(Type.Integer({ minimum: 1, maximum: 65_536, description: "Connections to this host's origin at most; requests past it wait (within timeoutMs). Default: the config's upstream.maxConnectionsPerOrigin." })),
  http2: Type.Optional(Type.Boolean({ description: 'Offer HTTP/2 to this host (over TLS, by ALPN); HTTP/1.1 when it does not take it.' })),
  options: Type.Optional(Type.Record(Type.String(), Type.Unknown(), {
    description: "Vendor-specific settings (an API version, a region, a project): their schema is the provider's adapter's (VendorAdapter.hostOptions), checked on write.",
  })),
  headers: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: MAX_SEALED_HEADER_VALUE_LENGTH }), {
    maxProperties: MAX_HOST_HEADERS,
    description: 'Extra headers sent to this upstream; they override forwarded client headers of the same name. '
      + `Names are HTTP tokens (stored lowercased), unique ignoring case; values (at most ${MAX_HEADER_VALUE_LENGTH} characters) have no CR, LF, NUL or other control character but tab. `
      + 'Values may be secrets (an API gateway\'s subscription key): stored sealed when RELAY_MASTER_KEY is set (a value may also be given sealed, from relay master-key seal), '
      + `shown whole to an admin and as ${MASKED_HEADER_VALUE} to a viewer, and masked out of upstream answers. `
      + 'Headers Relay sets itself are refused: credentials (host keys carry them), content-type, and hop-by-hop or framing headers (host, content-length, transfer-encoding, connection, ...).',
  })),
}, { additionalProperties: false });

export const ModelBinding = Type.Object({
  hostId: Id,
  upstreamModel: Type.String({ minLength: 1, maxLength: MAX_UPSTREAM_MODEL_LENGTH }),
  enabled: Type.Boolean({ default: true }),
  weight: Type.Integer({ minimum: 0, maximum: 1000, default: 1 }),
}, { additionalProperties: false });

/** Why a request moves from a model to its next fallback (core/pipeline/fallbacks.ts). */
export const FallbackCondition = Type.Union([
  Type.Literal('server_error'), Type.Literal('timeout'), Type.Literal('rate_limit'), Type.Literal('no_healthy_binding'),
  Type.Literal('content_filter'), Type.Literal('context_window_exceeded'),
], {
  description: 'server_error: upstream 5xx or unreachable; timeout: no answer in time; rate_limit: a 429, or every host key cooling; no_healthy_binding: no host key usable (circuit open, refused, none configured); '
    + "content_filter: the upstream's content filter refused the prompt; context_window_exceeded: the prompt is over the model's spec.contextWindow (estimated before sending) or the upstream said so.",
});

export const ModelFallback = Type.Object({
  modelId: Id,
  on: Type.Optional(Type.Array(FallbackCondition, {
    uniqueItems: true, minItems: 1, description: 'The conditions that move the request to this fallback. Default: every condition.',
  })),
}, { additionalProperties: false });

/** How a request retries before its first byte (core/pipeline/retry-policy.ts); every field absent = Relay's defaults. */
export const RetryPolicy = Type.Object({
  attemptsPerBinding: Type.Optional(Type.Integer({
    minimum: 1, maximum: 10, description: 'Tries of one binding (host key) before moving to the next, with backoff between them. Default 1: a failure moves on at once.',
  })),
  maxAttempts: Type.Optional(Type.Integer({
    minimum: 1, maximum: 100, description: 'Upstream attempts for the whole request, across bindings and fallbacks. Default: one per binding and key, as many as there are.',
  })),
  backoff: Type.Optional(Type.Object({
    initialMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000, description: 'Wait before the second try of a binding. Default 200.' })),
    maxMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 300_000, description: 'Longest wait between tries. Default 5000; not below initialMs.' })),
    multiplier: Type.Optional(Type.Number({ minimum: 1, maximum: 10, description: 'Each wait is the previous one times this. Default 2.' })),
    jitter: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: 'Fraction of each wait taken off at random (0: none, 1: full jitter). Default 0.5.' })),
  }, { additionalProperties: false })),
  maxRetryAfterMs: Type.Optional(Type.Integer({
    minimum: 0, maximum: 300_000,
    description: "Longest upstream retry-after worth waiting for inside one request: a 429 whose retry-after is at most this is tried again on the same binding (when attemptsPerBinding allows) after it; a longer one moves on to the next binding or fallback, or answers 429. Default 0: never waits.",
  })),
  retryOn: Type.Optional(Type.Array(Type.Integer({ minimum: 400, maximum: 599 }), {
    uniqueItems: true, minItems: 1, maxItems: 200,
    description: 'Upstream statuses that are retried or moved on from; any other is the client\'s answer. Default: 408, 429 and every 5xx. A refused host key (401/403) always moves to another key.',
  })),
  deadlineMs: Type.Optional(Type.Integer({
    minimum: 100, maximum: 3_600_000,
    description: 'Bound on the whole request before its first byte (every try, wait and fallback): past it the attempt in flight is cancelled and the client gets a 504.',
  })),
}, { additionalProperties: false });

export const ModelSpec = Type.Object({
  contextWindow: Type.Optional(Type.Integer({
    minimum: 1, maximum: 100_000_000,
    description: "The model's context window in tokens. A prompt estimated clearly over it goes straight to the first fallback taking context_window_exceeded (docs/operations.md). Unset: the window Relay ships for the bindings' upstream models, if it lists them.",
  })),
  maxOutputTokens: Type.Optional(Type.Integer({
    minimum: 1, maximum: 10_000_000,
    description: "The model's output-token limit. Upstreams that need a max_tokens (Anthropic) get it when the client gives none, instead of 4096: coding agents (Codex) never send one.",
  })),
  reasoning: Type.Boolean({
    default: false,
    description: "Whether the model reasons. Only then does a translated request carry the client's reasoning (effort, budget) to the upstream; "
      + 'otherwise it is left out and named in x-relay-dropped.',
  }),
  /** Efforts offered to clients (Codex's picker); the canonical efforts, so every route can carry them. Unique, so bounded by the enum. */
  reasoningLevels: Type.Optional(Type.Array(ReasoningEffort, { uniqueItems: true })),
  description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION_LENGTH })),
  bindings: Type.Array(ModelBinding, { default: [], maxItems: MAX_MODEL_BINDINGS }),
  fallbacks: Type.Optional(Type.Array(ModelFallback, {
    maxItems: MAX_MODEL_FALLBACKS,
    description: 'Models tried in order, before the first byte, when every binding of this model failed for one of the entry\'s `on` conditions. '
      + 'A fallback may be on another vendor and shape (the request is translated); one the relay key\'s policy does not grant is skipped. '
      + "Only this model's own list is followed (a fallback's fallbacks are not).",
  })),
  retry: Type.Optional(RetryPolicy),
  hedge: Type.Optional(Type.Object({
    afterMs: Type.Integer({ minimum: 10, maximum: 600_000, description: "Send the request to the next binding too when the first has not answered (response headers) after its recent p95 time to first byte, or after this long until the binding has 20 recent answers; keep the first answer, cancel the other." }),
  }, { additionalProperties: false, description: 'Hedged first bytes for a latency-sensitive model; off when absent (docs/operations.md "Routing").' })),
  balancing: Type.Optional(Type.Union([Type.Literal('weighted'), Type.Literal('least-in-flight'), Type.Literal('lowest-latency')], {
    description: 'The order bindings are tried in: weighted (random by weight, the default), least-in-flight (fewest requests in flight on this instance), '
      + "or lowest-latency (lowest recent average time to first byte, shared through Valkey). Weights stay a prior; a key's health, cooldown and circuit still apply.",
  })),
}, { additionalProperties: false });

export const HostKeySpec = Type.Object({
  hostId: Id,
  policyId: Type.Optional(Id),
  valueFrom: Type.Object({
    kind: Type.Union([Type.Literal('env'), Type.Literal('stored')]),
    env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: MAX_NAME_LENGTH })),
  }, { additionalProperties: false }),
  value: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_SECRET_LENGTH, description: 'Write-only. The upstream secret when valueFrom.kind is stored.' })),
  hasValue: Type.Optional(Type.Boolean({ description: 'Server-set: whether a stored value is present.', readOnly: true })),
  enabled: Type.Boolean({ default: true }),
  weight: Type.Integer({ minimum: 0, maximum: 1000, default: 1 }),
}, { additionalProperties: false });

export const RateLimitSpec = Type.Object({
  requestsPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
  tokensPerMinute: Type.Optional(Type.Integer({ minimum: 1 })),
  concurrentRequests: Type.Optional(Type.Integer({ minimum: 1 })),
}, { additionalProperties: false });

export const PolicySpec = Type.Object({
  tier: Type.Union([Type.Literal('relay'), Type.Literal('host')], { default: 'relay' }),
  modelIds: Type.Union([Type.Literal('*'), Type.Array(Id, { maxItems: MAX_POLICY_MODELS })], { default: [] }),
  rateLimitIds: Type.Array(Id, { default: [], maxItems: MAX_POLICY_RATE_LIMITS }),
  payloadLoggingEnabled: Type.Boolean({ default: false }),
  fallbacks: Type.Optional(Type.Array(ModelFallback, {
    maxItems: MAX_MODEL_FALLBACKS,
    description: "Fallbacks for every model this policy's keys request whose own spec.fallbacks is absent or empty (same form and rules as a model's).",
  })),
  /** The retry policy of every model this policy's keys request that has none of its own. */
  retry: Type.Optional(RetryPolicy),
  fastModes: Type.Optional(Type.Union([Type.Literal('allow'), Type.Literal('standard'), Type.Literal('refuse')], {
    description: "Requests for a premium-priced fast mode (OpenAI's service_tier \"priority\", Codex's Fast; Anthropic's speed \"fast\", Claude Code's /fast): "
      + 'allow (the default) sends them as asked; standard sends them at the standard speed and price (x-relay-fast-mode: standard); refuse answers 403.',
  })),
}, { additionalProperties: false });

export const PricingSpec = Type.Object({
  modelId: Id,
  hostId: Type.Optional(Id),
  // ISO 4217 alphabetic codes are three uppercase letters; the code is shown beside costs as is.
  currency: Type.String({ pattern: '^[A-Z]{3}$', default: 'USD', description: 'ISO 4217 code: three uppercase letters, e.g. USD, EUR.' }),
  ...RateFields,
  ...WebSearchRate,
  longContext: Type.Optional(LongContextRates),
  ...PriceModifierFields,
}, { additionalProperties: false, description: "Overrides the shipped price table (relay prices) for a model, or for a model on one host." });

export const BudgetWindow = Type.Union([
  Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly'), Type.Literal('lifetime'),
  Type.Object({ rollingDays: Type.Integer({ minimum: 1, maximum: 3660 }) }, { additionalProperties: false }),
], { description: 'daily, weekly (from Monday) and monthly windows start at midnight in spec.timezone; {rollingDays: N} is the last N days; lifetime never resets.' });

export const BudgetSpec = Type.Object({
  scope: Type.Object({
    relayKeyId: Type.Optional(Id),
    policyId: Type.Optional(Id),
    modelId: Type.Optional(Id),
  }, { additionalProperties: false, default: {}, description: 'What the budget covers: one relay key, one policy, one model, or (empty) every request.' }),
  window: BudgetWindow,
  timezone: Type.String({ minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone of the daily, weekly and monthly windows, e.g. Europe/Paris.' }),
  // Spend is counted in millionths: a smaller limit would round to 0 and its spent fraction be infinite.
  limitAmount: Type.Optional(Type.Number({ minimum: 0.000001, maximum: 1e12, description: 'Most money spent in a window, in currency; at least 0.000001, the smallest amount Relay counts.' })),
  currency: Type.String({ pattern: '^[A-Z]{3}$', default: 'USD', description: 'ISO 4217 code of limitAmount; only costs in this currency count.' }),
  limitTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1e15, description: 'Most tokens (input + output) in a window.' })),
  action: Type.Union([Type.Literal('refuse'), Type.Literal('alert')], { default: 'refuse', description: 'At 100%: refuse requests (429) until the window resets, or only alert.' }),
  unpriced: Type.Optional(Type.Union([Type.Literal('allow'), Type.Literal('refuse')], {
    default: 'allow',
    description: 'A request Relay cannot price in currency (its model has no pricings entity, and a binding\'s upstream model is not in the shipped price table) adds nothing to limitAmount. allow: it is served, its tokens counted against limitTokens only; refuse: it is refused (403) before it is sent. refuse needs limitAmount and action refuse.',
  })),
  alertAt: Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 1 }), { default: [0.5, 0.8, 1], maxItems: 10, uniqueItems: true, description: 'Fractions of the limit that raise an alert.' }),
  alertWebhooks: Type.Optional(Type.Array(Type.Object({
    url: Type.String({ minLength: 8, maxLength: 4096, description: 'http(s) URL the alert is POSTed to (at most 2048 characters), or that URL sealed under RELAY_MASTER_KEY (relay master-key seal). A secret (Slack\'s URLs are): stored sealed when a master key is set; viewers see only its origin.' }),
    format: Type.Union([Type.Literal('json'), Type.Literal('slack')], { default: 'json', description: 'json: Relay\'s alert object; slack: an incoming-webhook message ({"text": ...}).' }),
  }, { additionalProperties: false }), { maxItems: 5, description: 'Where alerts go when spend crosses an alertAt fraction: once per fraction per window, retried with backoff.' })),
  enabled: Type.Boolean({ default: true }),
}, { additionalProperties: false });

export const RelayKeySpec = Type.Object({
  policyId: Id,
  prefix: Type.Optional(Type.String({ maxLength: 64, readOnly: true, description: 'Server-set display prefix.' })),
  payloadLoggingEnabled: Type.Boolean({ default: false }),
  enabled: Type.Boolean({ default: true }),
  expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time', maxLength: 64 }), Type.Null()])),
}, { additionalProperties: false });

export type ProviderSpec = Static<typeof ProviderSpec>;
export type HostSpec = Static<typeof HostSpec>;
export type ModelBinding = Static<typeof ModelBinding>;
export type ModelSpec = Static<typeof ModelSpec>;
export type FallbackCondition = Static<typeof FallbackCondition>;
export type RetryPolicy = Static<typeof RetryPolicy>;
export type HostKeySpec = Static<typeof HostKeySpec>;
export type RateLimitSpec = Static<typeof RateLimitSpec>;
export type PolicySpec = Static<typeof PolicySpec>;
export type PricingSpec = Static<typeof PricingSpec>;
export type RelayKeySpec = Static<typeof RelayKeySpec>;
export type BudgetSpec = Static<typeof BudgetSpec>;

export interface Metadata {
  id: string;
  slug: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
}

export interface Entity<S> {
  metadata: Metadata;
  spec: S;
}

export type Provider = Entity<ProviderSpec>;
export type Host = Entity<HostSpec>;
export type Model = Entity<ModelSpec>;
/** A host key as the snapshot holds it: `sealedValue` is the ciphertext, never sent out. */
export type HostKey = Entity<HostKeySpec> & { sealedValue: string | null };
export type RateLimit = Entity<RateLimitSpec>;
export type Policy = Entity<PolicySpec>;
export type Pricing = Entity<PricingSpec>;
/** A relay key as the snapshot holds it: `keyHash` is sha256(plaintext) in hex. */
export type RelayKey = Entity<RelayKeySpec> & { keyHash: string };
export type Budget = Entity<BudgetSpec>;

export interface KindSpecs {
  providers: ProviderSpec;
  hosts: HostSpec;
  models: ModelSpec;
  'host-keys': HostKeySpec;
  'rate-limits': RateLimitSpec;
  policies: PolicySpec;
  pricings: PricingSpec;
  'relay-keys': RelayKeySpec;
  budgets: BudgetSpec;
}

export type KindName = keyof KindSpecs;

/** A reference from a field of one kind to entities of another kind. */
export interface Reference {
  /** Where the id(s) sit in the spec; `bindings[].hostId` walks arrays. */
  path: string;
  kind: KindName;
}

/** What is wrong with a spec: `pointer` is relative to the spec (e.g. /baseUrl). */
export interface SpecProblem {
  pointer: string;
  message: string;
}

export interface KindDef {
  name: KindName;
  singular: string;
  schema: TSchema;
  references: Reference[];
  /** Spec fields the server sets; a caller's value is ignored on write. */
  serverFields: string[];
  /** Spec fields accepted on write but never stored in spec nor returned. */
  writeOnlyFields: string[];
  /** Checks JSON Schema cannot express, run on a spec the schema accepted. */
  check?: (spec: Record<string, unknown>) => SpecProblem | null;
  /** The form a checked spec is stored in. */
  normalize?: (spec: Record<string, unknown>) => Record<string, unknown>;
}

export const KINDS: Record<KindName, KindDef> = {
  providers: { name: 'providers', singular: 'provider', schema: ProviderSpec, references: [], serverFields: [], writeOnlyFields: [] },
  hosts: {
    name: 'hosts', singular: 'host', schema: HostSpec, references: [{ path: 'providerId', kind: 'providers' }], serverFields: [], writeOnlyFields: [],
    check: (spec) => hostSpecProblem(spec as HostSpec), normalize: (spec) => normalizeHostSpec(spec as HostSpec),
  },
  models: {
    name: 'models', singular: 'model', schema: ModelSpec, references: [{ path: 'bindings[].hostId', kind: 'hosts' }, { path: 'fallbacks[].modelId', kind: 'models' }], serverFields: [], writeOnlyFields: [],
    check: (spec) => retryPolicyProblem((spec as ModelSpec).retry),
  },
  'host-keys': {
    name: 'host-keys', singular: 'host key', schema: HostKeySpec,
    references: [{ path: 'hostId', kind: 'hosts' }, { path: 'policyId', kind: 'policies' }],
    serverFields: ['hasValue'], writeOnlyFields: ['value'],
  },
  'rate-limits': {
    name: 'rate-limits', singular: 'rate limit', schema: RateLimitSpec, references: [], serverFields: [], writeOnlyFields: [],
    // A rate limit without a limit limits nothing: attached to a policy, it would look like a guard that is not there.
    check: (spec) => (Object.keys(spec).length === 0 ? { pointer: '', message: 'set at least one of requestsPerMinute, tokensPerMinute, concurrentRequests' } : null),
  },
  policies: {
    name: 'policies', singular: 'policy', schema: PolicySpec,
    references: [{ path: 'modelIds[]', kind: 'models' }, { path: 'rateLimitIds[]', kind: 'rate-limits' }, { path: 'fallbacks[].modelId', kind: 'models' }],
    serverFields: [], writeOnlyFields: [],
    check: (spec) => retryPolicyProblem((spec as PolicySpec).retry),
  },
  pricings: {
    name: 'pricings', singular: 'pricing', schema: PricingSpec,
    references: [{ path: 'modelId', kind: 'models' }, { path: 'hostId', kind: 'hosts' }],
    serverFields: [], writeOnlyFields: [],
  },
  'relay-keys': { name: 'relay-keys', singular: 'relay key', schema: RelayKeySpec, references: [{ path: 'policyId', kind: 'policies' }], serverFields: ['prefix'], writeOnlyFields: [] },
  budgets: {
    name: 'budgets', singular: 'budget', schema: BudgetSpec,
    references: [{ path: 'scope.relayKeyId', kind: 'relay-keys' }, { path: 'scope.policyId', kind: 'policies' }, { path: 'scope.modelId', kind: 'models' }],
    serverFields: [], writeOnlyFields: [],
    check: (spec) => budgetSpecProblem(spec as BudgetSpec),
  },
};

/** Longest webhook URL accepted (its sealed form is longer). */
export const MAX_WEBHOOK_URL = 2048;

/** A sealed value (`v1.<keyId>.…`, core/crypto/sealing.ts) rather than a URL. */
export function isSealedForm(value: string): boolean {
  return /^v1\.[0-9a-f]+\.[\w-]+\.[\w-]+\.[\w-]*$/.test(value);
}

export function isWebhookUrl(value: string): boolean {
  if (value.length > MAX_WEBHOOK_URL) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** What JSON Schema cannot say of a retry policy: a backoff whose longest wait is not below its first. */
export function retryPolicyProblem(retry: RetryPolicy | undefined): SpecProblem | null {
  const backoff = retry?.backoff;
  if (backoff?.maxMs !== undefined && backoff.maxMs < (backoff.initialMs ?? 200)) {
    return { pointer: '/retry/backoff/maxMs', message: `is ${backoff.maxMs}: it must be at least initialMs (${backoff.initialMs ?? 200})` };
  }
  return null;
}

/** What JSON Schema cannot say of a budget: one scope at most, a limit, a real time zone. */
export function budgetSpecProblem(spec: BudgetSpec): SpecProblem | null {
  const scoped = Object.keys(spec.scope ?? {});
  if (scoped.length > 1) return { pointer: '/scope', message: `names ${scoped.join(' and ')}: a budget covers one relay key, one policy, one model, or (empty) everything` };
  if (spec.limitAmount === undefined && spec.limitTokens === undefined) return { pointer: '', message: 'set limitAmount, limitTokens, or both' };
  if (spec.unpriced === 'refuse' && (spec.limitAmount === undefined || spec.action === 'alert')) {
    return { pointer: '/unpriced', message: 'refuse applies to a budget that caps money and refuses: set limitAmount and action refuse, or unpriced allow' };
  }
  // A sealed URL was checked when it was sealed (core/budgets/webhook-sealing.ts).
  const badHook = (spec.alertWebhooks ?? []).findIndex((hook) => !isSealedForm(hook.url) && !isWebhookUrl(hook.url));
  // The URL is not echoed: it may hold a secret.
  if (badHook >= 0) return { pointer: `/alertWebhooks/${badHook}/url`, message: `is not an absolute http:// or https:// URL of at most ${MAX_WEBHOOK_URL} characters` };
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: spec.timezone });
  } catch {
    return { pointer: '/timezone', message: `${JSON.stringify(spec.timezone)} is not an IANA time zone (e.g. UTC, Europe/Paris, America/New_York)` };
  }
  return null;
}

export const KIND_NAMES = Object.keys(KINDS) as KindName[];

export function isKindName(s: string): s is KindName {
  return Object.hasOwn(KINDS, s);
}

/** Every id a spec references, with the kind it must be. */
export function referencedIds(kind: KindName, spec: Record<string, unknown>): Array<{ path: string; kind: KindName; id: string }> {
  const out: Array<{ path: string; kind: KindName; id: string }> = [];
  for (const ref of KINDS[kind].references) {
    collect(spec, ref.path.split('.'), ref.path, ref.kind, out);
  }
  return out;
}

function collect(value: unknown, segments: string[], path: string, kind: KindName, out: Array<{ path: string; kind: KindName; id: string }>): void {
  if (value === undefined || value === null) return;
  if (segments.length === 0) {
    if (typeof value === 'string' && value !== '*') out.push({ path, kind, id: value });
    return;
  }
  const [head, ...rest] = segments;
  const isArray = head.endsWith('[]');
  const key = isArray ? head.slice(0, -2) : head;
  const next = (value as Record<string, unknown>)[key];
  if (isArray) {
    if (Array.isArray(next)) for (const item of next) collect(item, rest, path, kind, out);
  } else {
    collect(next, rest, path, kind, out);
  }
}

// Host settings are checked here, at write time, because undici refuses them only when a request
// is sent: the request fails with a 502 and the host's keys are put to cool down for nothing.

/** An HTTP token (RFC 9110 5.6.2): what undici accepts as a header name. */
const HEADER_NAME_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What undici refuses in a header value: control characters but tab (CR, LF, NUL...), DEL, and anything above U+00FF. */
const BAD_HEADER_VALUE_CHAR_RE = /[^\t\x20-\x7e\x80-\xff]/;

const FRAMING = 'is set by Relay\'s HTTP client or is hop-by-hop, and would break the request';
/** Headers a host may not set, and why (lowercase names). See sendToHost in core/http/upstream.ts for how the rest are merged. */
const RESERVED_HOST_HEADERS = new Map<string, string>([
  ...[...CREDENTIAL_HEADERS].map((name): [string, string] => [name, 'carries a credential: store it as a host key, which is encrypted and which Relay sends itself']),
  ['content-type', 'is set by Relay (application/json)'],
  ['accept-encoding', 'is set by Relay (identity) so that the upstream answers uncompressed and usage can be read'],
  ...['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'expect']
    .map((name): [string, string] => [name, FRAMING]),
]);

/** A JSON pointer segment (RFC 6901): header names may contain ~, and a refused one may contain /. */
function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A character named by code point, so that an error message never repeats a control character. */
function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

function baseUrlProblem(raw: string): string | null {
  // new URL() silently drops tabs and newlines and reads \ as /: the stored text must be what is used.
  const bad = /[\s\\]/.exec(raw) ?? /[\x00-\x1f\x7f]/.exec(raw);
  if (bad) return `must not contain whitespace, control characters or backslashes (found ${codePoint(bad[0])})`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  // new URL('https:///v1') reads v1 as the host; require the host right after the //.
  if (!/^https?:\/\/[^/]/.test(raw) || url.hostname === '') return 'must name a host, as in https://host[:port][/path]';
  if (url.username !== '' || url.password !== '') return 'must not contain credentials (user:password@): store them as a host key';
  // joinUrl (core/http/upstream.ts) appends the endpoint path to the base URL as text.
  if (raw.includes('?') || raw.includes('#')) return 'must not have a query string or fragment: endpoint paths are appended to it';
  if (url.port === '0') return 'port must be 1-65535';
  return null;
}

export function hostSpecProblem(spec: HostSpec): SpecProblem | null {
  const urlProblem = baseUrlProblem(spec.baseUrl);
  if (urlProblem) return { pointer: '/baseUrl', message: urlProblem };
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(spec.headers ?? {})) {
    const pointer = `/headers/${pointerSegment(name)}`;
    if (name.length > MAX_HEADER_NAME_LENGTH) return { pointer: '/headers', message: `a header name is longer than ${MAX_HEADER_NAME_LENGTH} characters` };
    if (!HEADER_NAME_RE.test(name)) return { pointer, message: 'is not an HTTP header name: letters, digits and !#$%&\'*+-.^_`|~ only' };
    const lower = name.toLowerCase();
    const reserved = RESERVED_HOST_HEADERS.get(lower);
    if (reserved) return { pointer, message: `${lower} cannot be set on a host: it ${reserved}` };
    const twin = seen.get(lower);
    if (twin !== undefined) return { pointer, message: `repeats header ${twin} (header names ignore case)` };
    seen.set(lower, name);
    // A sealed value was checked when it was sealed (core/catalog/host-header-sealing.ts).
    if (isSealedForm(value)) continue;
    const problem = headerValueProblem(value);
    if (problem) return { pointer, message: problem };
  }
  return null;
}

/** Why a (plaintext) host header value cannot be sent; null when it can. The value is never echoed: it may be a secret. */
export function headerValueProblem(value: string): string | null {
  if (value.length > MAX_HEADER_VALUE_LENGTH) return `value must be at most ${MAX_HEADER_VALUE_LENGTH} characters in length`;
  const bad = BAD_HEADER_VALUE_CHAR_RE.exec(value);
  if (bad) return `value must not contain ${codePoint(bad[0])}: no CR, LF, NUL or other control character but tab, nor characters above U+00FF`;
  if (value === MASKED_HEADER_VALUE) return `value is ${MASKED_HEADER_VALUE}, the mask a viewer is shown: give the header's real value`;
  return null;
}

/** Header names lowercased: forwarded and default headers are lowercase, so a host header of the same name replaces them instead of being sent twice. */
export function normalizeHostSpec(spec: HostSpec): HostSpec {
  if (!spec.headers) return spec;
  return { ...spec, headers: Object.fromEntries(Object.entries(spec.headers).map(([name, value]) => [name.toLowerCase(), value])) };
}
