// Every error Relay answers with has one code here, with its HTTP status and the
// canonical error type that wire plugins map to their own shape. A test pins the list.

export type ErrorType =
  | 'invalid_request'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limit'
  /** A budget is spent: OpenAI clients know it as insufficient_quota. */
  | 'quota'
  | 'upstream'
  | 'unavailable'
  | 'timeout'
  | 'server';

interface ErrorDef {
  status: number;
  type: ErrorType;
  description: string;
}

export const ERROR_CODES = {
  RELAY_ERR_BAD_REQUEST: { status: 400, type: 'invalid_request', description: 'The request is malformed or a field is invalid.' },
  RELAY_ERR_INVALID_JSON: { status: 400, type: 'invalid_request', description: 'The request body is not valid JSON.' },
  RELAY_ERR_CONTENT_UNSUPPORTED: { status: 400, type: 'invalid_request', description: 'A content part of the request cannot be taken by the upstream serving the model.' },
  RELAY_ERR_UNSUPPORTED_MEDIA_TYPE: { status: 415, type: 'invalid_request', description: 'The request content type is not accepted.' },
  RELAY_ERR_BODY_TOO_LARGE: { status: 413, type: 'payload_too_large', description: 'The request body exceeds the configured limit.' },
  RELAY_ERR_RESPONSE_STATE_TOO_LARGE: { status: 413, type: 'payload_too_large', description: 'A stored Responses conversation would exceed responsesState.maxBytes; send store: false, or start a new conversation.' },
  RELAY_ERR_BODY_TIMEOUT: { status: 408, type: 'timeout', description: 'The request body did not arrive within the configured time.' },
  RELAY_ERR_OVERLOADED: { status: 503, type: 'unavailable', description: 'Relay holds as many request bodies as it may; retry shortly.' },
  RELAY_ERR_HEADERS_TOO_LARGE: { status: 431, type: 'invalid_request', description: 'The request headers exceed what the server accepts.' },
  RELAY_ERR_UNAUTHENTICATED: { status: 401, type: 'authentication', description: 'Credentials are missing or invalid.' },
  RELAY_ERR_RELAY_KEY_INVALID: { status: 401, type: 'authentication', description: 'The relay key is missing, unknown, disabled or expired.' },
  RELAY_ERR_FORBIDDEN: { status: 403, type: 'permission', description: 'The caller may not do this.' },
  RELAY_ERR_MODEL_NOT_GRANTED: { status: 403, type: 'permission', description: "The relay key's policy does not grant the requested model." },
  RELAY_ERR_FAST_MODE_NOT_ALLOWED: { status: 403, type: 'permission', description: "The relay key's policy does not allow the premium-priced fast mode the request asks for." },
  RELAY_ERR_BUDGET_UNPRICED: { status: 403, type: 'permission', description: 'A budget covering the request caps money and refuses what it cannot count, and Relay has no price for the model in its currency; the message names the budget and the binding.' },
  RELAY_ERR_CSRF: { status: 403, type: 'permission', description: 'A cookie-authenticated change came without the same-origin proof.' },
  RELAY_ERR_NOT_FOUND: { status: 404, type: 'not_found', description: 'No such resource.' },
  RELAY_ERR_METHOD_NOT_ALLOWED: { status: 405, type: 'invalid_request', description: 'The path is served, but not with this method.' },
  RELAY_ERR_MODEL_NOT_FOUND: { status: 404, type: 'not_found', description: 'The model is unknown or has no enabled binding.' },
  RELAY_ERR_RESPONSE_NOT_FOUND: { status: 404, type: 'not_found', description: 'A stored response (previous_response_id, /v1/responses/{id}) is unknown, expired, or not visible to this relay key.' },
  RELAY_ERR_ITEM_NOT_FOUND: { status: 404, type: 'not_found', description: "An item_reference names an item that no stored response visible to this relay key holds." },
  RELAY_ERR_NO_USABLE_HOST_KEY: { status: 404, type: 'not_found', description: "The model's hosts have no host key that may serve it: none, every one disabled, or excluded by its host-tier policy." },
  RELAY_ERR_CONFLICT: { status: 409, type: 'conflict', description: 'The change conflicts with existing state.' },
  RELAY_ERR_IN_USE: { status: 409, type: 'conflict', description: 'The entity is still referenced by others.' },
  RELAY_ERR_RATE_LIMITED: { status: 429, type: 'rate_limit', description: 'A relay-side rate limit was reached.' },
  RELAY_ERR_BUDGET_EXCEEDED: { status: 429, type: 'quota', description: 'A budget covering the request (its relay key, policy, model, or everything) is spent; the message names it and when it resets.' },
  RELAY_ERR_CONTEXT_WINDOW_EXCEEDED: { status: 400, type: 'invalid_request', description: "The prompt does not fit the context window of the model nor of any fallback that takes it." },
  RELAY_ERR_CONTENT_FILTERED: { status: 400, type: 'invalid_request', description: "The upstream's content filter refused the request, and no fallback took it." },
  RELAY_ERR_RETRY_DEADLINE: { status: 504, type: 'timeout', description: "The model's retry policy deadline passed before any upstream answered." },
  RELAY_ERR_UPSTREAM_RATE_LIMITED: { status: 429, type: 'rate_limit', description: "The upstream's rate limit was reached, or every host key for the model is cooling down after it; retry-after says when one is usable." },
  RELAY_ERR_LOGIN_THROTTLED: { status: 429, type: 'rate_limit', description: 'Too many wrong passwords (sign-in, or the current password when changing it); wait before trying again.' },
  RELAY_ERR_UPSTREAM_UNREACHABLE: { status: 502, type: 'upstream', description: 'No upstream could be reached.' },
  RELAY_ERR_UPSTREAM_BAD_RESPONSE: { status: 502, type: 'upstream', description: 'The upstream answered with something Relay could not read.' },
  RELAY_ERR_UPSTREAM_TIMEOUT: { status: 502, type: 'timeout', description: 'The upstream did not answer in time.' },
  RELAY_ERR_HOST_KEY_REFUSED: { status: 502, type: 'upstream', description: "The upstream refused Relay's host key (401/403); an operator must fix it." },
  RELAY_ERR_BUDGET_UNAVAILABLE: { status: 503, type: 'unavailable', description: 'A budget covering the request cannot say what it has spent yet (its first read of the usage log has not answered); retry shortly.' },
  RELAY_ERR_NO_HEALTHY_KEY: { status: 503, type: 'unavailable', description: 'No healthy host key is available for the model.' },
  RELAY_ERR_MASTER_KEY_MISSING: { status: 400, type: 'invalid_request', description: 'Stored host-key values (and a catalog export of budget webhook URLs or host header values stored unsealed) need RELAY_MASTER_KEY to be set.' },
  RELAY_ERR_BACKEND_NOT_LOADED: { status: 400, type: 'invalid_request', description: 'The selected backend plugin is not loaded.' },
  RELAY_ERR_ADAPTER_NOT_LOADED: { status: 400, type: 'invalid_request', description: "The provider's vendor adapter is not loaded on this instance." },
  RELAY_ERR_QUERY_UNSUPPORTED: { status: 400, type: 'invalid_request', description: 'The selected log backend cannot answer this query.' },
  RELAY_ERR_LOG_BACKEND_UNAVAILABLE: { status: 503, type: 'unavailable', description: 'A usage or payload log backend did not answer; reads from it fail until it returns.' },
  RELAY_ERR_DATABASE_UNAVAILABLE: { status: 503, type: 'unavailable', description: 'The database is unreachable; writes are refused until it returns.' },
  RELAY_ERR_SHUTTING_DOWN: { status: 503, type: 'unavailable', description: 'Relay is shutting down.' },
  RELAY_ERR_INTERNAL: { status: 500, type: 'server', description: 'An unexpected error inside Relay.' },
} as const satisfies Record<string, ErrorDef>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface RelayErrorBody {
  code: ErrorCode;
  message: string;
  type: ErrorType;
  status: number;
  /** JSON pointer or field name the error is about, when there is one. */
  field?: string;
  /** Set by a vendor adapter's decodeError when the upstream said why (a model fallback may take it). */
  reason?: UpstreamErrorReason;
}

/** Why an upstream refused a request, when another model may still answer it (issue 42). */
export type UpstreamErrorReason = 'context_window_exceeded' | 'content_filter';

export class RelayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly field?: string;
  /** Extra response headers (e.g. retry-after). */
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message?: string, extra: { field?: string; headers?: Record<string, string>; cause?: unknown } = {}) {
    const def = ERROR_CODES[code];
    super(message ?? def.description, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'RelayError';
    this.code = code;
    this.status = def.status;
    this.type = def.type;
    this.field = extra.field;
    this.headers = extra.headers;
  }

  toBody(): RelayErrorBody {
    const body: RelayErrorBody = { code: this.code, message: this.message, type: this.type, status: this.status };
    if (this.field !== undefined) body.field = this.field;
    return body;
  }
}

export function relayError(code: ErrorCode, message?: string, extra?: { field?: string; headers?: Record<string, string>; cause?: unknown }): RelayError {
  return new RelayError(code, message, extra);
}

export function isRelayError(err: unknown): err is RelayError {
  return err instanceof RelayError;
}

/**
 * The Relay code for an upstream's HTTP error status, for every vendor adapter. 401/403 mean
 * Relay's host key was refused: the caller cannot fix that, so it is an upstream failure (502),
 * and the pipeline marks the key invalid and fails over. A 429 is the upstream's limit, not Relay's.
 * 529 is Anthropic's "overloaded".
 */
export function codeForUpstreamStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
  if (status === 404) return 'RELAY_ERR_NOT_FOUND';
  if (status === 408) return 'RELAY_ERR_UPSTREAM_TIMEOUT';
  if (status === 413) return 'RELAY_ERR_BODY_TOO_LARGE';
  if (status === 429) return 'RELAY_ERR_UPSTREAM_RATE_LIMITED';
  if (status === 502 || status === 503 || status === 529) return 'RELAY_ERR_UPSTREAM_UNREACHABLE';
  if (status === 504) return 'RELAY_ERR_UPSTREAM_TIMEOUT';
  if (status >= 500) return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
  if (status >= 400) return 'RELAY_ERR_BAD_REQUEST';
  return 'RELAY_ERR_UPSTREAM_BAD_RESPONSE';
}

/** A user error at start-up (bad config, unknown plugin): printed without a stack trace. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}
