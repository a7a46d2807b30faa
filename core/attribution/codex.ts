// Who a Codex request comes from, read from the headers Codex CLI sends (CLIENTS.md): recorded in
// the usage event as `client: 'codex'` and an `extras` map keyed by the header names as received.
// Only the headers listed here are read, so no credential can end up in a usage event.
import type { Attribution } from '../plugins/context.ts';

export const CODEX_CLIENT = 'codex';

/**
 * The spec's attribution headers and what Codex 0.169.0 really sends for them
 * (`x-agent-*` is `x-codex-*`, `x-vendor-a-subagent` is `x-openai-subagent`).
 */
export const ATTRIBUTION_HEADERS = [
  'session-id',
  'thread-id',
  'x-client-request-id',
  'x-codex-installation-id',
  'x-codex-window-id',
  'x-codex-parent-thread-id',
  'x-openai-subagent',
  'x-codex-turn-metadata',
  'x-codex-beta-features',
  'originator',
] as const;

/** Fields of the JSON `x-codex-turn-metadata` header copied into extras on their own. */
const TURN_METADATA_FIELDS = ['turn_id', 'installation_id'] as const;

/** A header value longer than this is cut (turn metadata grows with the session's context). */
export const MAX_EXTRA_LENGTH = 2048;

type Headers = Record<string, string | string[] | undefined>;

/** Codex CLI sends `originator: codex_exec` (or `codex_cli_rs`) and a user agent that starts the same way. */
export function isCodex(headers: Headers): boolean {
  const originator = headers.originator;
  const agent = headers['user-agent'];
  return (typeof originator === 'string' && originator.startsWith('codex_')) || (typeof agent === 'string' && agent.startsWith('codex_'));
}

function headerValue(headers: Headers, name: string): string | undefined {
  const raw = headers[name];
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  if (value === undefined || value === '') return undefined;
  return value.length > MAX_EXTRA_LENGTH ? value.slice(0, MAX_EXTRA_LENGTH) : value;
}

function turnMetadataFields(raw: string | undefined): Record<string, string> {
  if (raw === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed === null || typeof parsed !== 'object') return {};
    const out: Record<string, string> = {};
    for (const field of TURN_METADATA_FIELDS) {
      const value = (parsed as Record<string, unknown>)[field];
      if (typeof value === 'string' && value !== '') out[field] = value.slice(0, MAX_EXTRA_LENGTH);
    }
    return out;
  } catch {
    return {}; // cut or not JSON: the raw header is still recorded
  }
}

export function codexAttribution(headers: Headers): Attribution {
  const extras: Record<string, string> = {};
  for (const name of ATTRIBUTION_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== undefined) extras[name] = value;
  }
  const fromTurn = turnMetadataFields(headers['x-codex-turn-metadata'] as string | undefined);
  for (const [key, value] of Object.entries(fromTurn)) extras[key] ??= value;
  return { client: CODEX_CLIENT, extras };
}
