// Request ids beside Relay's own (a fresh UUID, the usage log's key: a client's id could repeat): the
// client's x-request-id kept when safe to log and send on, and the upstream's id read from its
// answer, so a vendor support ticket can be filed from a Relay log.
import type { IncomingHttpHeaders } from 'node:http';

/** Bounded and plain: an id goes into log lines, headers and stored rows, never a way to inject into them. */
const SAFE_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

/** One header value if it is a safe id, else null (absent, repeated, too long, odd characters). */
export function safeRequestId(value: string | string[] | undefined): string | null {
  return typeof value === 'string' && SAFE_ID.test(value) ? value : null;
}

/** The client's own x-request-id, when it sent a safe one. */
export function clientRequestIdOf(headers: IncomingHttpHeaders): string | null {
  return safeRequestId(headers['x-request-id']);
}

/** The upstream's own id for its answer (OpenAI: x-request-id; Anthropic: request-id), when safe. */
export function upstreamRequestIdOf(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): string | null {
  return safeRequestId(headers['x-request-id']) ?? safeRequestId(headers['request-id']);
}
