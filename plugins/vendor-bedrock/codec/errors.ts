// Bedrock's errors: the exception name (the x-amzn-errortype header, `__type` in the body, or
// an event-stream exception's name) -> the HTTP status Relay's health and failover read, and
// the canonical error. Throttling and quota are 429; a model not ready and service trouble are
// 503 (both fail over and cool the key down like any 429/5xx).
import { ERROR_CODES, codeForUpstreamStatus, type ErrorCode, type RelayErrorBody } from '../../../core/plugin-api.ts';
import type { UpstreamErrorReason } from '../../../core/plugin-api/canonical.ts';

const STATUS_BY_EXCEPTION: Record<string, number> = {
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  modelnotreadyexception: 503,
  serviceunavailableexception: 503,
  internalserverexception: 500,
  modelstreamerrorexception: 502,
  modelerrorexception: 502,
  modeltimeoutexception: 408,
  validationexception: 400,
  resourcenotfoundexception: 404,
  accessdeniedexception: 403,
  unrecognizedclientexception: 403,
  expiredtokenexception: 403,
  invalidsignatureexception: 403,
};

/** `ThrottlingException:http://internal.amazon.com/...` or `com.amazon...#ThrottlingException` -> `throttlingexception`. */
export function exceptionName(raw: unknown): string | undefined {
  if (typeof raw !== 'string' || raw === '') return undefined;
  const name = raw.split(':')[0].split('#').at(-1) ?? '';
  return name === '' ? undefined : name.toLowerCase();
}

/** The status Relay acts on for a Bedrock exception (the upstream's own status when the name is unknown). */
export function statusForException(name: string | undefined, status: number): number {
  return (name !== undefined ? STATUS_BY_EXCEPTION[name] : undefined) ?? status;
}

const MAX_MESSAGE = 2000;

export function bedrockErrorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message?: unknown; Message?: unknown };
    if (typeof parsed?.message === 'string') return parsed.message;
    if (typeof parsed?.Message === 'string') return parsed.Message;
  } catch {
    // not JSON: the text itself is the message
  }
  return undefined;
}

// A ValidationException whose words say the input is over the model's window (Converse: "Input is
// too long for requested model", Claude on Bedrock: "prompt is too long"); a guardrail's refusal.
const CONTEXT_WORDS = /input is too long|prompt is too long|too many (?:input )?tokens|context (?:length|window)|maximum (?:input )?tokens? /i;
const FILTER_WORDS = /content filter|guardrail/i;

/** Why the upstream refused the request, when another model may answer it (a 400 only). */
export function bedrockErrorReason(status: number, message: string | undefined): UpstreamErrorReason | undefined {
  if (status !== 400 || message === undefined) return undefined;
  if (CONTEXT_WORDS.test(message)) return 'context_window_exceeded';
  if (FILTER_WORDS.test(message)) return 'content_filter';
  return undefined;
}

export function decodeBedrockError(status: number, body: string): RelayErrorBody {
  const code = codeForUpstreamStatus(status);
  const def = ERROR_CODES[code];
  const upstreamMessage = bedrockErrorMessage(body);
  const message = upstreamMessage ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  const reason = bedrockErrorReason(status, upstreamMessage);
  return { code, type: def.type, status: def.status, message, ...(reason ? { reason } : {}) };
}

/** An in-stream exception's name -> the Relay code. */
export function codeForStreamException(name: string | undefined): ErrorCode {
  return codeForUpstreamStatus(statusForException(name, 500));
}
