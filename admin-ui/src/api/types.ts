// Shapes the control-plane API serves (see SPEC.md "Control plane" and core/catalog/kinds.ts).
// The usage, settings and key-health ones are held equal to core's by test/support/admin-ui-api-types.ts
// (checked by npm run typecheck).

export type KindName =
  | 'providers' | 'hosts' | 'models' | 'host-keys' | 'rate-limits' | 'policies' | 'pricings' | 'relay-keys' | 'budgets';

export interface Metadata {
  id: string;
  slug: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
}

export type Spec = Record<string, unknown>;

export interface Entity<S = Spec> {
  metadata: Metadata;
  spec: S;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  type: string;
  status: number;
  /** JSON pointer such as /spec/hostId. */
  field?: string;
}

export type Role = 'admin' | 'viewer';

export interface Whoami {
  kind: 'user' | 'admin-token';
  username?: string;
  /** Absent only from an older server: treated as admin. */
  role?: Role;
}

export interface DashboardUser {
  id: string;
  username: string;
  role: Role;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface RelayConfig {
  version: string;
  plugins: Array<{ name: string; kind: string; source?: string }>;
  features: { payloadLogging?: boolean; masterKey?: boolean } & Record<string, unknown>;
  basePaths: Record<string, string>;
  backends: { usage: string[]; payload: string[] };
  /** Ids of the vendor adapters loaded on this instance. */
  adapters: string[];
}

export interface PlaintextResult {
  plaintext: string;
  relayKey: Entity;
}

export type HealthState = 'healthy' | 'cooling' | 'open' | 'half-open' | 'invalid' | 'disabled';

export interface HostKeyHealth {
  hostKeyId: string;
  state: HealthState;
  until?: string;
  reason?: string;
}

export interface UsageLoggingSetting {
  backend: string;
}

export interface PayloadLoggingSetting {
  enabled: boolean;
  backend: string;
  maxBytes: number;
  viewersReadPayloads: boolean;
}

export interface UsageEvent {
  request_id: string;
  started_at: string;
  finished_at: string;
  relay_key_id: string | null;
  relay_key_prefix: string | null;
  policy_id: string | null;
  model_requested: string | null;
  model_id: string | null;
  model_slug: string | null;
  host_id: string | null;
  host_key_id: string | null;
  provider_id: string | null;
  upstream_model: string | null;
  inbound_shape: string;
  upstream_shape: string | null;
  status: number;
  error_code: string | null;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost: number | null;
  currency: string | null;
  latency_ms: number;
  ttfb_ms: number | null;
  attempts: number;
  client_aborted: boolean;
  client: string | null;
  extras: Record<string, string>;
  /** The client's own x-request-id, when it sent a safe one. */
  client_request_id?: string | null;
  /** The upstream's id for its answer: quote it in a vendor support ticket. */
  upstream_request_id?: string | null;
}

/** One agent session (a Codex thread, a Claude Code session): GET /api/usage/sessions. */
export interface SessionSummary {
  session_id: string;
  /** The relay key that made it (sessions are per key); null without a key, or on a session page without relayKeyId whose id several keys used. */
  relay_key_id: string | null;
  relay_key_prefix: string | null;
  client: string | null;
  first_started_at: string;
  last_finished_at: string;
  duration_ms: number;
  turns: number;
  models: string[];
  /** The currencies its requests were priced in, sorted; with more than one, totals.cost adds different currencies. */
  currencies: string[];
  /** Its cost in each currency, only when priced in several and the usage backend splits it. */
  costs?: Array<{ currency: string; cost: number }>;
  totals: UsageTotals;
  cache_hit_ratio: number | null;
}

export interface SessionsAnswer {
  from: string;
  to: string | null;
  sessions: SessionSummary[];
}

export interface SessionDetail {
  session: SessionSummary;
  /** Each relay key's session with this id: more than one when several keys sent it (session then adds them up). */
  sessions: SessionSummary[];
  /** The session's cost per currency, only when it was priced in several (its totals.cost adds them). */
  costs?: Array<{ currency: string; cost: number }>;
  items: UsageEvent[];
  nextCursor: string | null;
}

export interface LogDetail extends UsageEvent {
  request_body?: string;
  response_body?: string;
  request_truncated?: boolean;
  response_truncated?: boolean;
  request_headers?: Record<string, string>;
  response_headers?: Record<string, string>;
  /** Set for a viewer: captured bodies and headers are admins' only. */
  payload_withheld?: 'admin_only';
}

export interface UsageTotals {
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  cost: number;
}

export type GroupBy = 'model' | 'relay_key';

export interface UsageSummary {
  totals: UsageTotals;
  /** costs: the group's cost per currency, only in a window priced in several (its totals.cost adds them). */
  groups?: Array<{ key: string | null; totals: UsageTotals; costs?: Array<{ currency: string; cost: number }> }>;
  /** The cost in each currency requests were priced in, the costliest first; totals.cost adds them. */
  costs: Array<{ currency: string; cost: number }>;
}

export interface UsageTimeseries {
  bucketSeconds: number;
  /** The currency of each point's cost when asked (costCurrency); null: added over every currency. */
  costCurrency: string | null;
  points: Array<{ t: string; key?: string | null; totals: UsageTotals }>;
}

/** GET /api/budgets/{id}/status: a budget's spend in its current window. */
export interface BudgetStatus {
  budgetId: string;
  windowStart: string;
  resetsAt: string | null;
  spentAmount: number;
  spentTokens: number;
  limitAmount: number | null;
  limitTokens: number | null;
  remainingAmount: number | null;
  remainingTokens: number | null;
  currency: string;
  fraction: number;
  exceeded: boolean;
}

export type BudgetWindow = 'daily' | 'weekly' | 'monthly' | 'lifetime' | { rollingDays: number };

/** One row of GET /api/usage/budgets. */
export interface BudgetUsage {
  budgetId: string;
  slug: string;
  displayName: string;
  scope: { relayKeyId?: string; policyId?: string; modelId?: string };
  window: BudgetWindow;
  enabled: boolean;
  from: string;
  to: string | null;
  /** The budget's currency: that of totals.cost. */
  currency: string;
  /** As the budget counts it: cost in currency only; requests, errors and tokens of every currency. */
  totals: UsageTotals;
  status: BudgetStatus;
}

/** GET /api/usage/budgets/{id}: cumulative spend per bucket, and the projection to the window's end. */
export interface BudgetBurnDown {
  budgetId: string;
  from: string;
  to: string;
  bucketSeconds: number;
  status: BudgetStatus;
  /** amount in the budget's currency only; tokens of every currency. */
  points: Array<{ t: string; amount: number; tokens: number }>;
  projection: { at: string; amount: number; tokens: number; limitReachedAt: string | null } | null;
}

/** One alert of GET /api/budgets/{id}/alerts. */
export interface BudgetAlert {
  id: string;
  budgetId: string;
  windowStart: string;
  threshold: number;
  firedAt: string;
  updatedAt: string;
  fraction: number;
  spentAmount: number;
  spentTokens: number;
  currency: string;
  status: 'fired' | 'delivered' | 'failed';
  deliveries: Array<{ target: string; format: 'json' | 'slack'; status: 'pending' | 'delivered' | 'failed'; attempts: number; lastError: string | null; deliveredAt: string | null }>;
}
