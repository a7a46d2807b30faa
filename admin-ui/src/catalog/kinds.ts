// What the dashboard knows about each of the eight catalog kinds: names, what it is for,
// the fields of its form, defaults for a new one, and the columns of its list.
// The fields mirror core/catalog/kinds.ts.
import type { KindName } from '../api/types.ts';
import type { Field } from './fields.ts';

export interface KindInfo {
  name: KindName;
  title: string;
  singular: string;
  description: string;
  fields: Field[];
  defaults: () => Record<string, unknown>;
}

const isStored = (spec: Record<string, unknown>) => (spec.valueFrom as { kind?: string } | undefined)?.kind === 'stored';
const isEnv = (spec: Record<string, unknown>) => !isStored(spec);

export const KIND_INFO: Record<KindName, KindInfo> = {
  providers: {
    name: 'providers', title: 'Providers', singular: 'provider',
    description: 'A provider names the vendor adapter that speaks to a family of upstreams: openai for OpenAI and OpenAI-compatible servers, anthropic for Anthropic.',
    fields: [
      { key: 'adapter', label: 'Adapter', type: 'text', required: true, placeholder: 'openai', monospace: true, suggestions: ['openai', 'anthropic'], loaded: 'adapters', help: 'Id of a loaded vendor adapter: openai (OpenAI and OpenAI-compatible servers: see the presets above), anthropic, azure-openai (Azure OpenAI deployments), or an in-house one.' },
      { key: 'shapes', label: 'Wire shapes', type: 'list', placeholder: 'openai.chat, openai.responses', help: 'Optional. Narrows which wire shapes the upstreams speak; empty means every shape the adapter speaks.' },
    ],
    defaults: () => ({ adapter: '' }),
  },
  hosts: {
    name: 'hosts', title: 'Hosts', singular: 'host',
    description: 'A host is one upstream endpoint of a provider: its base URL, timeout and extra headers.',
    fields: [
      { key: 'providerId', label: 'Provider', type: 'ref', kind: 'providers', required: true },
      { key: 'baseUrl', label: 'Base URL', type: 'text', required: true, placeholder: 'https://api.openai.com/v1', monospace: true,
        help: 'The base, not the endpoint: Relay appends /chat/completions, /messages, ... OpenAI and compatible servers: .../v1 (a bare origin gets /v1). Anthropic: https://api.anthropic.com, with or without /v1.' },
      { key: 'enabled', label: 'Enabled', type: 'boolean', onLabel: 'Route requests to this host' },
      { key: 'timeoutMs', label: 'Timeout (ms)', type: 'number', integer: true, min: 100, max: 3_600_000, step: 1000, help: 'Bound on waiting for response headers, between body bytes, and between a stream\'s events (keep-alive comments alone do not extend it).' },
      { key: 'headers', label: 'Extra headers', type: 'headers', help: 'Sent to this upstream on every request. Values may be secrets (a gateway\'s key such as ocp-apim-subscription-key): stored sealed when a master key is set, masked out of upstream answers, and viewers see ******** in place of each value.' },
    ],
    defaults: () => ({ providerId: '', baseUrl: '', enabled: true, timeoutMs: 600_000 }),
  },
  models: {
    name: 'models', title: 'Models', singular: 'model',
    description: 'A model is what clients ask for by its slug. Bindings map it to an upstream model on one or more hosts.',
    fields: [
      { key: 'description', label: 'Description', type: 'text' },
      { key: 'contextWindow', label: 'Context window', type: 'number', integer: true, min: 1, placeholder: '128000', help: 'Tokens. Optional; shown to agent clients, and a prompt clearly over it goes to a fallback that takes context_window_exceeded.' },
      { key: 'maxOutputTokens', label: 'Max output tokens', type: 'number', integer: true, min: 1, placeholder: '64000', help: "Tokens. Optional; the model's output limit, sent to Anthropic upstreams when the client gives no max_tokens (otherwise 4096)." },
      { key: 'reasoning', label: 'Reasoning', type: 'boolean', onLabel: 'This model supports reasoning effort' },
      { key: 'reasoningLevels', label: 'Reasoning levels', type: 'list', placeholder: 'low, medium, high', when: (s) => s.reasoning === true },
      { key: 'bindings', label: 'Host bindings', type: 'bindings', help: 'Requests go to enabled bindings, by weight; failover moves to the next one.' },
      { key: 'balancing', label: 'Balancing', type: 'select', help: 'The order bindings are tried in. Health, cooldowns and circuits still apply.', options: [
        { value: 'weighted', label: 'Weighted: random by binding weight' },
        { value: 'least-in-flight', label: 'Least in flight: fewest requests on the way' },
        { value: 'lowest-latency', label: 'Lowest latency: lowest recent time to first byte' },
      ] },
    ],
    defaults: () => ({ reasoning: false, bindings: [] }),
  },
  'host-keys': {
    name: 'host-keys', title: 'Host keys', singular: 'host key',
    description: 'A host key is the credential Relay sends to an upstream host, read from an environment variable or stored encrypted.',
    fields: [
      { key: 'hostId', label: 'Host', type: 'ref', kind: 'hosts', required: true },
      { key: 'policyId', label: 'Host policy', type: 'ref', kind: 'policies', optional: true, filter: (s) => s.tier === 'host', help: 'Optional. A host-tier policy limits which models this key serves.' },
      { key: 'valueFrom.kind', label: 'Value from', type: 'select', required: true, options: [
        { value: 'env', label: 'Environment variable (nothing secret kept in the database)' },
        { value: 'stored', label: 'Stored value (encrypted with RELAY_MASTER_KEY)' },
      ] },
      { key: 'valueFrom.env', label: 'Variable name', type: 'text', required: true, placeholder: 'OPENAI_API_KEY', monospace: true, when: isEnv },
      { key: 'value', label: 'Secret value', type: 'secret', placeholder: 'sk-…', when: isStored, help: 'Write-only: it is encrypted on the server and never shown again.' },
      { key: 'enabled', label: 'Enabled', type: 'boolean', onLabel: 'Use this key' },
      { key: 'weight', label: 'Weight', type: 'number', integer: true, min: 0, max: 1000 },
    ],
    defaults: () => ({ hostId: '', valueFrom: { kind: 'env', env: '' }, enabled: true, weight: 1 }),
  },
  'rate-limits': {
    name: 'rate-limits', title: 'Rate limits', singular: 'rate limit',
    description: 'A rate limit caps requests, tokens or concurrency. Policies attach rate limits to the keys they govern.',
    fields: [
      { key: 'requestsPerMinute', label: 'Requests per minute', type: 'number', integer: true, min: 1 },
      { key: 'tokensPerMinute', label: 'Tokens per minute', type: 'number', integer: true, min: 1 },
      { key: 'concurrentRequests', label: 'Concurrent requests', type: 'number', integer: true, min: 1 },
    ],
    defaults: () => ({}),
  },
  policies: {
    name: 'policies', title: 'Policies', singular: 'policy',
    description: 'A relay-tier policy grants models to relay keys; a host-tier policy limits what a host key serves.',
    fields: [
      { key: 'tier', label: 'Tier', type: 'select', required: true, options: [
        { value: 'relay', label: 'Relay: grants models to relay keys' },
        { value: 'host', label: 'Host: limits what a host key serves' },
      ] },
      { key: 'modelIds', label: 'Models', type: 'refs', kind: 'models', allowAll: true },
      { key: 'rateLimitIds', label: 'Rate limits', type: 'refs', kind: 'rate-limits' },
      { key: 'payloadLoggingEnabled', label: 'Payload logging', type: 'boolean', onLabel: 'Capture request and response bodies', help: 'Takes effect only while payload logging is enabled in Settings.' },
      { key: 'fastModes', label: 'Fast modes', type: 'select', options: [
        { value: 'allow', label: 'Allow: sent as asked' },
        { value: 'standard', label: 'Standard: run at the standard speed and price' },
        { value: 'refuse', label: 'Refuse: answer 403' },
      ], help: 'Premium-priced speed: OpenAI priority processing (Codex\'s Fast, 2-2.5x) and Anthropic fast mode (Claude Code\'s /fast, 2-6x).' },
    ],
    defaults: () => ({ tier: 'relay', modelIds: [], rateLimitIds: [], payloadLoggingEnabled: false, fastModes: 'allow' }),
  },
  pricings: {
    name: 'pricings', title: 'Pricings', singular: 'pricing',
    description: 'A pricing sets per-million-token rates for a model (optionally on one host); usage cost is computed from it. Without one, a model is priced from the shipped table by its upstream model name (relay prices), or is unpriced.',
    fields: [
      { key: 'modelId', label: 'Model', type: 'ref', kind: 'models', required: true },
      { key: 'hostId', label: 'Host', type: 'ref', kind: 'hosts', optional: true, help: 'Optional. Leave empty to price the model on every host.' },
      { key: 'currency', label: 'Currency', type: 'text', required: true, placeholder: 'USD', monospace: true },
      { key: 'inputPerMillion', label: 'Input per million tokens', type: 'number', min: 0, step: 0.01, required: true },
      { key: 'outputPerMillion', label: 'Output per million tokens', type: 'number', min: 0, step: 0.01, required: true },
      { key: 'cachedInputPerMillion', label: 'Cached input per million tokens', type: 'number', min: 0, step: 0.01, help: 'Optional. Prompt-cache reads; empty: the input rate.' },
      { key: 'cacheWritePerMillion', label: 'Cache write per million tokens', type: 'number', min: 0, step: 0.01, help: "Optional. Prompt-cache writes (Anthropic's 5-minute writes); empty: the input rate." },
      { key: 'cacheWrite1hPerMillion', label: '1-hour cache write per million tokens', type: 'number', min: 0, step: 0.01, help: 'Optional. Anthropic\'s 1-hour cache writes; empty: the cache write rate.' },
      { key: 'reasoningPerMillion', label: 'Reasoning per million tokens', type: 'number', min: 0, step: 0.01, help: 'Optional. Where reasoning tokens are priced apart from output; empty: the output rate. A long-context tier (longContext) and price modifiers (modifiers, e.g. an Azure deployment\'s priority multiple) are set through the API.' },
      { key: 'webSearchPerThousand', label: 'Web searches per thousand', type: 'number', min: 0, step: 0.01, help: 'Optional. Server-side web searches the upstream runs (Anthropic web_search, OpenAI web_search calls); empty: not priced, and the usage record says so.' },
    ],
    defaults: () => ({ modelId: '', currency: 'USD' }),
  },
  'relay-keys': {
    name: 'relay-keys', title: 'Relay keys', singular: 'relay key',
    description: 'A relay key is the bearer credential callers send. Its policy decides which models it reaches. The plaintext is shown once.',
    fields: [
      { key: 'policyId', label: 'Policy', type: 'ref', kind: 'policies', required: true, filter: (s) => s.tier !== 'host' },
      { key: 'enabled', label: 'Enabled', type: 'boolean', onLabel: 'Accept requests with this key' },
      { key: 'payloadLoggingEnabled', label: 'Payload logging', type: 'boolean', onLabel: 'Capture request and response bodies', help: 'Takes effect only while payload logging is enabled in Settings.' },
      { key: 'expiresAt', label: 'Expires at', type: 'datetime', help: 'Optional. After this time the key is refused.' },
    ],
    defaults: () => ({ policyId: '', enabled: true, payloadLoggingEnabled: false, expiresAt: null }),
  },
  budgets: {
    name: 'budgets', title: 'Budgets', singular: 'budget',
    description: 'A budget caps spend in money and/or tokens over a window, for one relay key, one policy, one model, or everything; at 100% it refuses requests (429) or only alerts. Alerts go to webhooks once per fraction per window.',
    fields: [
      { key: 'scope.relayKeyId', label: 'Relay key', type: 'ref', kind: 'relay-keys', optional: true, help: 'Set one of relay key, policy or model, or none for every request.' },
      { key: 'scope.policyId', label: 'Policy', type: 'ref', kind: 'policies', optional: true },
      { key: 'scope.modelId', label: 'Model', type: 'ref', kind: 'models', optional: true },
      { key: 'window', label: 'Window', type: 'select', required: true, options: [
        { value: 'daily', label: 'Daily' }, { value: 'weekly', label: 'Weekly (from Monday)' }, { value: 'monthly', label: 'Monthly' }, { value: 'lifetime', label: 'Lifetime (never resets)' },
      ], help: 'A rolling window of N days ({"rollingDays": N}) is set through the API.' },
      { key: 'timezone', label: 'Time zone', type: 'text', required: true, placeholder: 'UTC', monospace: true, help: 'IANA name, e.g. Europe/Paris: where daily, weekly and monthly windows start at midnight.' },
      { key: 'limitAmount', label: 'Money limit', type: 'number', min: 0, step: 0.01, help: 'In the currency below. Set this, the token limit, or both.' },
      { key: 'currency', label: 'Currency', type: 'text', required: true, placeholder: 'USD', monospace: true },
      { key: 'limitTokens', label: 'Token limit', type: 'number', integer: true, min: 1, help: 'Input + output tokens.' },
      { key: 'action', label: 'At 100%', type: 'select', required: true, options: [{ value: 'refuse', label: 'Refuse requests until the window resets' }, { value: 'alert', label: 'Only alert' }] },
      { key: 'unpriced', label: 'Unpriced requests', type: 'select', options: [
        { value: 'allow', label: 'Serve them, counting only their tokens' },
        { value: 'refuse', label: 'Refuse them (403)' },
      ], help: 'Requests to a model Relay has no price for in this currency add nothing to the money limit. Refuse needs a money limit and "Refuse requests" at 100%.' },
      { key: 'alertAt', label: 'Alert at', type: 'numbers', placeholder: '0.5, 0.8, 1', help: 'Fractions of the limit, between 0 and 1.' },
      { key: 'alertWebhooks', label: 'Alert webhooks', type: 'webhooks', help: 'Each alert is POSTed to these: Relay\'s JSON, or a Slack incoming-webhook message. The URLs are secrets: stored sealed when a master key is set, and viewers see only their origin.' },
      { key: 'enabled', label: 'Enabled', type: 'boolean', onLabel: 'Count spend and enforce this budget' },
    ],
    defaults: () => ({ scope: {}, window: 'monthly', timezone: 'UTC', currency: 'USD', action: 'refuse', unpriced: 'allow', alertAt: [0.5, 0.8, 1], enabled: true }),
  },
};

export const KIND_ORDER: KindName[] = ['providers', 'hosts', 'models', 'host-keys', 'policies', 'rate-limits', 'pricings', 'relay-keys'];

export function isKindName(s: string): s is KindName {
  return Object.hasOwn(KIND_INFO, s);
}

/** Kinds a kind's form and list need, to show names instead of ids. */
export function referencedKinds(kind: KindName): KindName[] {
  const out = new Set<KindName>();
  for (const f of KIND_INFO[kind].fields) {
    if (f.type === 'ref' || f.type === 'refs') out.add(f.kind);
    if (f.type === 'bindings') out.add('hosts');
  }
  return [...out];
}
