// What a plugin's register function receives: the two listeners, the hook registry, read access
// to the catalog snapshot and settings, the request pipeline, and capabilities (a logger, a SQL
// handle for its own tables, a Valkey connection of its own, a data folder), not the kernel's objects.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Redis } from 'ioredis';
import type { Authenticator, InboundCodec, InboundHttpRequest, ModelResolver, Recorder, RequestTracer, ShapeId, VendorAdapter } from '../hooks.ts';
import type { PayloadBackend, UsageBackend } from '../observer/types.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Settings } from '../settings/types.ts';
import type { Database } from '../db/types.ts';

export interface HookRegistry {
  /** Adds an authentication provider; lower `order` is asked first (default 100). */
  addAuthenticator(name: string, fn: Authenticator, order?: number): void;
  /** Replaces the kernel's catalog resolver. */
  setModelResolver(fn: ModelResolver): void;
  addVendorAdapter(adapter: VendorAdapter): void;
  /**
   * A vendor adapter registered so far (by a plugin this one depends on), so a vendor that
   * speaks another's wire (Azure OpenAI, OpenAI's) can build on its codec; undefined if none.
   */
  vendorAdapter(id: string): VendorAdapter | undefined;
  addInboundCodec(codec: InboundCodec): void;
  addUsageBackend(backend: UsageBackend): void;
  addPayloadBackend(backend: PayloadBackend): void;
  /** A detached observer of every finished request (in addition to the selected backends). */
  onRecord(name: string, fn: Recorder): void;
  /** Follows every inference request as it runs (one tracer per instance: a second is a start-up error). */
  setRequestTracer(tracer: RequestTracer): void;
}

/** Per-request attribution an integration adds to the usage event. */
export interface Attribution {
  client?: string;
  extras?: Record<string, string>;
}

export interface InferenceCall {
  /** The inbound wire shape. */
  shape: ShapeId;
  /** The request body as received (forwarded unchanged in passthrough). */
  body: Buffer;
  /**
   * The parsed body, parsed on the first call (passthrough reads only `model` and `stream`). A key
   * written twice in one of its objects throws a 400 naming it: an upstream may keep the other value.
   */
  json(): Record<string, unknown>;
  /**
   * One top-level member of the body. `model`, `stream` and `stream_options` are read from their
   * bytes, without parsing the rest (an agent's turn is hundreds of KB); any other name parses the
   * body. As for json(), a key written twice in an object of what is parsed throws a 400.
   */
  member(name: string): unknown;
  /**
   * One top-level member's value as the body's bytes (a view, not a copy; undefined when absent),
   * for a cheap look before `member` parses it. A member Relay does not read from the bytes (see
   * `member`) is found by parsing the body, and comes back as its JSON.
   */
  memberBytes(name: string): Buffer | undefined;
  /**
   * Whether some string in the body, a key or a value at any depth, may be `text`, known from the
   * scan every body gets: false only when it certainly is not. The scan looks for `file_id` and
   * `item_reference`; any other text is answered true (look in the body yourself).
   */
  mayHold(text: string): boolean;
  /**
   * Whether some object in the body, at any depth, may be a Responses reasoning item that names a
   * stored item by id alone (type `reasoning`, a non-empty string `id`, no non-empty string
   * `encrypted_content`), known from the same scan: false only when it certainly holds none.
   */
  mayHoldReasoningById(): boolean;
  model: string;
  stream: boolean;
  /** Query string to forward to a passthrough upstream, e.g. `?beta=true`. */
  search?: string;
  /** Who the client is, from its headers (agent integrations). */
  attribution?: Attribution;
  /** Shape whose codec renders errors when `shape` has none (e.g. embeddings use openai.chat's). */
  errorShape?: ShapeId;
  /**
   * False: a web search tool the client declares is left out of translated requests and named in
   * x-relay-dropped, rather than becoming the upstream's own search (the Codex route, SPEC).
   */
  upstreamWebSearch?: boolean;
}

export interface Pipeline {
  /**
   * Runs one inference request end to end: authenticate, rate limits, resolveModel,
   * dispatch with failover (passthrough or translation), render, record.
   * Errors are rendered in the inbound shape's codec.
   */
  handle(request: InboundHttpRequest, res: ServerResponse, call: InferenceCall): Promise<void>;
  /** Authenticates only (for routes such as GET /v1/models). Throws RelayError 401. */
  authenticate(request: InboundHttpRequest, shape: ShapeId): Promise<import('../hooks.ts').Principal>;
  /** Models the principal can reach, from the snapshot. */
  reachableModels(principal: import('../hooks.ts').Principal): import('../catalog/kinds.ts').Model[];
  /** Renders an error in the shape's codec (or the canonical form) and sends it. */
  sendError(reply: FastifyReply, shape: ShapeId, err: unknown): void;
}

export interface RelayContext {
  readonly log: Logger;
  readonly inference: FastifyInstance;
  readonly control: FastifyInstance;
  readonly hooks: HookRegistry;
  readonly pipeline: Pipeline;
  /** The current catalog snapshot; call each time, never keep it (it is replaced on change). */
  snapshot(): CatalogSnapshot;
  readonly settings: Settings;
  /** Relay's database (Postgres or PGlite), for the plugin's own tables: name them after the plugin. */
  readonly sql: Pick<Database, 'kind' | 'query' | 'exec' | 'transaction'>;
  /** Where the plugin registers its own metrics (prom-client), served on /metrics. */
  readonly metrics: Registry;
  /**
   * A Valkey (or Redis) connection of the plugin's own to the configured `valkey.url`, closed at
   * shutdown; null when none is configured.
   */
  valkey(): Redis | null;
  /** Directory for plugin data (files), from RELAY_DATA_DIR. */
  readonly dataDir: string;
  /** The principal of a presented relay key (looked up by hash in the snapshot); throws 401. */
  principalForRelayKey(plaintext: string): import('../hooks.ts').Principal;
  /** Relay's Responses state store (previous_response_id, item_reference on translated routes). */
  readonly responsesState: import('../responses-state/types.ts').ResponsesState;
  /** Opens a sealed host-key value (AES-GCM under RELAY_MASTER_KEY). */
  openSecret(sealed: string): string;
  /** Runs at shutdown, after in-flight requests drained, in reverse order of registration. */
  onClose(fn: () => Promise<void> | void): void;
}
