// The config file's schema. Unknown keys are errors, never silently dropped.
import { Type, type Static } from '@sinclair/typebox';
import { CONCURRENCY_SLOT_TTL_MS } from '../pipeline/rate-limit-counters.ts';
import { DEFAULT_STALL_MS } from '../pipeline/client-writer.ts';

export const PluginEntry = Type.Object({
  use: Type.String({ minLength: 1, description: 'Built-in plugin name, a path relative to the config file, or a package name.' }),
  options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  enabled: Type.Optional(Type.Boolean({ default: true })),
}, { additionalProperties: false });

export const RelayConfigSchema = Type.Object({
  server: Type.Object({
    /** The inference port's bind address: every interface, for containers and load balancers. */
    host: Type.String({ default: '0.0.0.0' }),
    /** The control port's bind address (admin API, dashboard, /metrics): loopback unless opened on purpose (0.0.0.0 in a container). */
    controlHost: Type.String({ default: '127.0.0.1', description: "The control port's bind address (admin API, dashboard, /metrics). Loopback by default; 0.0.0.0 in a container whose control port only a private network reaches." }),
    /** Overridden by RELAY_PORT. */
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
    /** Overridden by RELAY_CONTROL_PORT. */
    controlPort: Type.Integer({ minimum: 0, maximum: 65535, default: 8081 }),
    bodyLimitBytes: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
    /** How long in-flight requests and streams may take to finish at shutdown. */
    drainTimeoutMs: Type.Integer({ minimum: 0, default: 30_000 }),
    /** Believe X-Forwarded-For / X-Forwarded-Proto from the proxy in front (client address, and https for the Secure session cookie). */
    trustProxy: Type.Boolean({ default: false }),
    /** Open connections the inference port keeps at once; past it new ones are closed (the control port has its own). */
    maxConnections: Type.Integer({ minimum: 1, default: 10_000 }),
    /** Idle time before a keep-alive connection is closed. */
    keepAliveTimeoutMs: Type.Integer({ minimum: 1, default: 72_000 }),
    /** Bound on receiving a request's headers. */
    headersTimeoutMs: Type.Integer({ minimum: 1_000, default: 30_000 }),
    /** Bound on receiving a whole request body (a slow client's 32 MiB at 1 Mbit/s takes ~4.5 min). */
    bodyTimeoutMs: Type.Integer({ minimum: 1_000, default: 300_000 }),
    /** Bound on the gap between two reads of a request body. */
    bodyIdleTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
    /** Bound on waiting for a client that stopped reading its answer; past it the answer is cut and its upstream call closed. */
    writeStallTimeoutMs: Type.Integer({ minimum: 100, default: DEFAULT_STALL_MS }),
    /** Request-body bytes held in memory at once across every request; past it a request gets 503. */
    bodyMemoryLimitBytes: Type.Integer({ minimum: 1024, default: 512 * 1024 * 1024 }),
  }, { additionalProperties: false, default: {} }),
  upstream: Type.Object({
    /** Connections per upstream origin, unless a host sets its own (spec.maxConnections). */
    maxConnectionsPerOrigin: Type.Integer({ minimum: 1, default: 1024 }),
    /** Bound on opening a TCP/TLS connection to an upstream (the host's timeoutMs bounds the whole wait for headers). */
    connectTimeoutMs: Type.Integer({ minimum: 100, default: 10_000 }),
    /** Idle upstream connections are closed after this long. */
    keepAliveTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
  }, { additionalProperties: false, default: {} }),
  database: Type.Object({
    /** Overridden by DATABASE_URL. Unset: embedded PGlite under dataDir. */
    url: Type.Optional(Type.String()),
    queryTimeoutMs: Type.Integer({
      minimum: 100, maximum: 3_600_000, default: 30_000,
      description: 'Most one query on Postgres may take (migrations excepted); past it the query fails and its connection is closed, so a server that stops answering frees the pool. Opening a connection has 5 s.',
    }),
  }, { additionalProperties: false, default: {} }),
  /** Overridden by RELAY_DATA_DIR. Relative paths are relative to the working directory. */
  dataDir: Type.String({ default: './data' }),
  valkey: Type.Object({
    /** Redis/Valkey URL for shared rate limits and key health; overridden by VALKEY_URL. */
    url: Type.Optional(Type.String()),
    /** Deadline of one rate-limit command; past it the request is served without counting (fail open). */
    commandTimeoutMs: Type.Integer({ minimum: 1, maximum: 10_000, default: 50 }),
    timeoutMs: Type.Integer({
      minimum: 100, maximum: 600_000, default: 5_000,
      description: "Deadline of every other Valkey command (key health, budgets' shared spend, alert claims, binding latencies, log-valkey on Relay's connection): past it the command fails as if Valkey were down, and a connection silent that long while commands wait is closed and opened again. Key health's subscriber, which sends no commands, is pinged this often and its connection replaced when a ping gets no answer within it.",
    }),
    /** After 3 failures in a row rate limits skip Valkey for this long, then probe it again. */
    breakerOpenMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  }, { additionalProperties: false, default: {} }),
  rateLimits: Type.Object({
    maxSlotHoldMs: Type.Integer({
      minimum: CONCURRENCY_SLOT_TTL_MS, default: 60 * 60_000,
      description: "Longest a request's concurrency slot is renewed (Relay bounds no request's duration otherwise): past it the slot frees itself one lease (10 minutes) later even if the request is still running, so a permit a bug never gave back does not hold a slot for good; each one is warned and counted (relay_rate_limit_slots_overheld_total). At least the 10-minute lease.",
    }),
  }, { additionalProperties: false, default: {} }),
  health: Type.Object({
    /** Upstream 5xx, timeouts and refused connections take a host or host key out of rotation only after a run of them (DESIGN.md "Health and states"). */
    circuitBreaker: Type.Object({
      failures: Type.Integer({ minimum: 1, maximum: 1000, default: 5, description: 'Failures in a row, with no success between them, that open the circuit.' }),
      windowMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000, description: 'Only failures this recent count toward the run.' }),
      openMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 15_000, description: 'How long an open circuit refuses requests before one probe request is let through (half-open).' }),
    }, { additionalProperties: false, default: {} }),
  }, { additionalProperties: false, default: {} }),
  budgets: Type.Object({
    reconcileMs: Type.Integer({
      minimum: 100, maximum: 3_600_000, default: 60_000,
      description: "How often each budget's spend is re-read from the usage log: how soon instances sharing a usage backend (log-postgres, log-clickhouse) see each other's spend.",
    }),
    readTimeoutMs: Type.Integer({
      minimum: 100, maximum: 600_000, default: 15_000,
      description: "Most one read of a budget's spend may take (from the usage log, the wait of up to 5 s for this instance's queued usage included, or from Valkey); past it the read counts as failed and the next request or reconcile starts a fresh one.",
    }),
    alerts: Type.Object({
      attempts: Type.Integer({ minimum: 1, maximum: 20, default: 5, description: 'Attempts to deliver a budget alert to a webhook, the first included.' }),
      retryBaseMs: Type.Integer({ minimum: 10, maximum: 600_000, default: 1000, description: 'Wait before the second attempt; doubled before each next one.' }),
      timeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000, description: 'Most one delivery attempt may take.' }),
    }, { additionalProperties: false, default: {} }),
  }, { additionalProperties: false, default: {} }),
  /** Relay's own Responses state (previous_response_id, item_reference) for translated routes (docs/operations.md). */
  responsesState: Type.Object({
    enabled: Type.Boolean({ default: true, description: 'Keep Responses requests with `store` not false that Relay translates, so previous_response_id and item_reference resolve on every vendor.' }),
    retentionHours: Type.Integer({ minimum: 1, maximum: 24 * 365, default: 30 * 24, description: 'How long a stored response is kept (OpenAI keeps 30 days).' }),
    maxBytes: Type.Integer({ minimum: 1024, maximum: 256 * 1024 * 1024, default: 8 * 1024 * 1024, description: 'Largest stored conversation (input and output items, as JSON). A request whose conversation is larger gets a 413 unless it sends store: false.' }),
    scope: Type.Union([Type.Literal('relay-key'), Type.Literal('policy')], { default: 'relay-key', description: 'Who may read a stored response: the relay key that created it, or every key of its policy.' }),
    keepForwarded: Type.Boolean({ default: true, description: 'Also keep a copy of Responses requests passed through to an OpenAI upstream, for models with bindings on more than one vendor shape (or fallbacks), so a conversation continues after a failover to another vendor.' }),
  }, { additionalProperties: false, default: {} }),
  admin: Type.Object({
    sessionTtlMinutes: Type.Integer({ minimum: 1, default: 12 * 60 }),
    /** Always mark the session cookie Secure. Without it the cookie is Secure when the request came over TLS or a trusted proxy (server.trustProxy) says https. */
    secureCookies: Type.Boolean({ default: false }),
    auditRetentionDays: Type.Optional(Type.Integer({
      minimum: 1, maximum: 36_500,
      description: "Days the audit trail keeps a row (they name users and the addresses they came from); older rows are deleted at start and every hour. Unset: kept.",
    })),
  }, { additionalProperties: false, default: {} }),
  usageLogging: Type.Object({
    backend: Type.String({
      minLength: 1, default: 'file',
      description: 'The usage backend selected until PUT /api/settings/usage-logging stores another: the id of a loaded one (file, postgres, clickhouse, valkey, ...). Start-up and relay check refuse one that is not loaded.',
    }),
  }, { additionalProperties: false, default: {} }),
  payloadLogging: Type.Object({
    backend: Type.String({
      minLength: 1, default: 'file',
      description: 'The payload backend selected until PUT /api/settings/payload-logging stores another: the id of a loaded one (file, s3, clickhouse, ...). Start-up and relay check refuse one that is not loaded.',
    }),
  }, { additionalProperties: false, default: {} }),
  catalog: Type.Object({
    file: Type.Optional(Type.String({
      minLength: 1,
      description: 'A catalog file (relay catalog export) applied at every start, as relay catalog apply does (GitOps); relative to the config file. A start whose file does not apply fails, naming the entity and field.',
    })),
    prune: Type.Boolean({ default: false, description: 'At start, also delete the providers, hosts, models, ... the catalog file lacks (never relay keys).' }),
  }, { additionalProperties: false, default: {} }),
  log: Type.Object({
    level: Type.Union([
      Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent'),
    ], { default: 'info' }),
  }, { additionalProperties: false, default: {} }),
  plugins: Type.Array(PluginEntry, { default: [] }),
}, { additionalProperties: false });

export type RelayConfig = Static<typeof RelayConfigSchema>;
export type PluginEntry = Static<typeof PluginEntry>;
