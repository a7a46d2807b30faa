// A host key the upstream refused (401/403) is the gateway's failure, not the caller's: the answer
// is a 502 of type `upstream` (Anthropic's `api_error`, OpenAI's `server_error`) whose message says
// the host key was refused, never a body typed as an authentication error, which a client such as
// Claude Code reads as its own credential failing. The upstream's words follow, without the key.
import { RelayError } from '../errors.ts';
import type { Route } from '../hooks.ts';

/** Longest part of the upstream's own message kept in the answer. */
const MAX_UPSTREAM_WORDS = 500;

/** True when `status` from `route`'s upstream refuses Relay's own host key (not a proxy-mode caller's credential). */
export function refusesHostKey(route: Route, status: number): boolean {
  return route.hostKey !== null && (status === 401 || status === 403);
}

/** The error to answer with; `upstreamMessage` must already be without the key (upstream-error.ts). */
export function hostKeyRefused(status: number, upstreamMessage: string | undefined): RelayError {
  const words = upstreamMessage?.trim().slice(0, MAX_UPSTREAM_WORDS);
  return new RelayError('RELAY_ERR_HOST_KEY_REFUSED',
    `The upstream refused Relay's host key for this model (HTTP ${status}): an operator must fix or replace that key; your own credentials are not at fault.`
    + (words ? ` The upstream said: ${words}` : ''));
}
