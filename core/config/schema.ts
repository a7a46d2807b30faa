// The config file's schema. Unknown keys are errors, never silently dropped.
import { Type, type Static } from '@sinclair/typebox';

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
    /** Inference POSTs read and answered by Relay's own HTTP/1.1 code (core/http/lean); false: Node's http server for all. */
    leanHttp: Type.Boolean({ default: true }),
  }, { additionalProperties: false, default: {} }),
  upstream: Type.Object({
    /** Upstream requests sent by Relay's own HTTP/1.1 client (core/http/lean-client); false: undici's Pool. For the whole process. */
    leanHttp: Type.Boolean({ default: true }),
  }, { additionalProperties: false, default: {} }),
  database: Type.Object({
    /** Overridden by DATABASE_URL. Unset: embedded PGlite under dataDir. */
    url: Type.Optional(Type.String()),
  }, { additionalProperties: false, default: {} }),
  /** Overridden by RELAY_DATA_DIR. Relative paths are relative to the working directory. */
  dataDir: Type.String({ default: './data' }),
  valkey: Type.Object({
    /** Redis/Valkey URL for shared rate limits and key health; overridden by VALKEY_URL. */
    url: Type.Optional(Type.String()),
  }, { additionalProperties: false, default: {} }),
  admin: Type.Object({
    sessionTtlMinutes: Type.Integer({ minimum: 1, default: 12 * 60 }),
    /** Always mark the session cookie Secure. Without it the cookie is Secure when the request came over TLS or a trusted proxy (server.trustProxy) says https. */
    secureCookies: Type.Boolean({ default: false }),
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
  log: Type.Object({
    level: Type.Union([
      Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent'),
    ], { default: 'info' }),
  }, { additionalProperties: false, default: {} }),
  plugins: Type.Array(PluginEntry, { default: [] }),
}, { additionalProperties: false });

export type RelayConfig = Static<typeof RelayConfigSchema>;
export type PluginEntry = Static<typeof PluginEntry>;
