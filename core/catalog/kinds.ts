// The eight catalog kinds: their spec schemas (DESIGN.md "Fields the spec does not show"),
// which fields reference which kinds, and which fields are write-only or server-set.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ReasoningEffort } from '../canonical/types.ts';

const Id = Type.String({ format: 'uuid', description: 'Id (UUID) of the referenced entity.' });

export const ProviderSpec = Type.Object({
  adapter: Type.String({ minLength: 1, description: 'Id of a vendor adapter plugin: openai, anthropic, or an in-house one.' }),
  shapes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), {
    description: 'Narrows the wire shapes this provider\'s upstreams speak (e.g. only openai.chat for a vLLM server). Defaults to every shape the adapter speaks.',
  })),
}, { additionalProperties: false });

export const HostSpec = Type.Object({
  providerId: Id,
  baseUrl: Type.String({ pattern: '^https?://', description: 'Base URL of the upstream, e.g. https://api.openai.com/v1' }),
  enabled: Type.Boolean({ default: true }),
  timeoutMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 600_000, description: 'Bound on waiting for response headers and between body bytes.' }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Extra headers sent to this upstream.' })),
}, { additionalProperties: false });

export const ModelBinding = Type.Object({
  hostId: Id,
  upstreamModel: Type.String({ minLength: 1 }),
  enabled: Type.Boolean({ default: true }),
  weight: Type.Integer({ minimum: 0, maximum: 1000, default: 1 }),
}, { additionalProperties: false });

export const ModelSpec = Type.Object({
  contextWindow: Type.Optional(Type.Integer({ minimum: 1 })),
  reasoning: Type.Boolean({ default: false }),
  /** Efforts offered to clients (Codex's picker); the canonical efforts, so every route can carry them. */
  reasoningLevels: Type.Optional(Type.Array(ReasoningEffort, { uniqueItems: true })),
  description: Type.Optional(Type.String()),
  bindings: Type.Array(ModelBinding, { default: [] }),
}, { additionalProperties: false });

export const HostKeySpec = Type.Object({
  hostId: Id,
  policyId: Type.Optional(Id),
  valueFrom: Type.Object({
    kind: Type.Union([Type.Literal('env'), Type.Literal('stored')]),
    env: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
  }, { additionalProperties: false }),
  value: Type.Optional(Type.String({ minLength: 1, description: 'Write-only. The upstream secret when valueFrom.kind is stored.' })),
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
  modelIds: Type.Union([Type.Literal('*'), Type.Array(Id)], { default: [] }),
  rateLimitIds: Type.Array(Id, { default: [] }),
  payloadLoggingEnabled: Type.Boolean({ default: false }),
}, { additionalProperties: false });

export const PricingSpec = Type.Object({
  modelId: Id,
  hostId: Type.Optional(Id),
  currency: Type.String({ minLength: 3, maxLength: 3, default: 'USD' }),
  inputPerMillion: Type.Number({ minimum: 0 }),
  outputPerMillion: Type.Number({ minimum: 0 }),
  cachedInputPerMillion: Type.Optional(Type.Number({ minimum: 0 })),
}, { additionalProperties: false });

export const RelayKeySpec = Type.Object({
  policyId: Id,
  prefix: Type.Optional(Type.String({ readOnly: true, description: 'Server-set display prefix.' })),
  payloadLoggingEnabled: Type.Boolean({ default: false }),
  enabled: Type.Boolean({ default: true }),
  expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
}, { additionalProperties: false });

export type ProviderSpec = Static<typeof ProviderSpec>;
export type HostSpec = Static<typeof HostSpec>;
export type ModelBinding = Static<typeof ModelBinding>;
export type ModelSpec = Static<typeof ModelSpec>;
export type HostKeySpec = Static<typeof HostKeySpec>;
export type RateLimitSpec = Static<typeof RateLimitSpec>;
export type PolicySpec = Static<typeof PolicySpec>;
export type PricingSpec = Static<typeof PricingSpec>;
export type RelayKeySpec = Static<typeof RelayKeySpec>;

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

export interface KindSpecs {
  providers: ProviderSpec;
  hosts: HostSpec;
  models: ModelSpec;
  'host-keys': HostKeySpec;
  'rate-limits': RateLimitSpec;
  policies: PolicySpec;
  pricings: PricingSpec;
  'relay-keys': RelayKeySpec;
}

export type KindName = keyof KindSpecs;

/** A reference from a field of one kind to entities of another kind. */
export interface Reference {
  /** Where the id(s) sit in the spec; `bindings[].hostId` walks arrays. */
  path: string;
  kind: KindName;
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
}

export const KINDS: Record<KindName, KindDef> = {
  providers: { name: 'providers', singular: 'provider', schema: ProviderSpec, references: [], serverFields: [], writeOnlyFields: [] },
  hosts: { name: 'hosts', singular: 'host', schema: HostSpec, references: [{ path: 'providerId', kind: 'providers' }], serverFields: [], writeOnlyFields: [] },
  models: { name: 'models', singular: 'model', schema: ModelSpec, references: [{ path: 'bindings[].hostId', kind: 'hosts' }], serverFields: [], writeOnlyFields: [] },
  'host-keys': {
    name: 'host-keys', singular: 'host key', schema: HostKeySpec,
    references: [{ path: 'hostId', kind: 'hosts' }, { path: 'policyId', kind: 'policies' }],
    serverFields: ['hasValue'], writeOnlyFields: ['value'],
  },
  'rate-limits': { name: 'rate-limits', singular: 'rate limit', schema: RateLimitSpec, references: [], serverFields: [], writeOnlyFields: [] },
  policies: {
    name: 'policies', singular: 'policy', schema: PolicySpec,
    references: [{ path: 'modelIds[]', kind: 'models' }, { path: 'rateLimitIds[]', kind: 'rate-limits' }],
    serverFields: [], writeOnlyFields: [],
  },
  pricings: {
    name: 'pricings', singular: 'pricing', schema: PricingSpec,
    references: [{ path: 'modelId', kind: 'models' }, { path: 'hostId', kind: 'hosts' }],
    serverFields: [], writeOnlyFields: [],
  },
  'relay-keys': { name: 'relay-keys', singular: 'relay key', schema: RelayKeySpec, references: [{ path: 'policyId', kind: 'policies' }], serverFields: ['prefix'], writeOnlyFields: [] },
};

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
