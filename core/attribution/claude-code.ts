// Who a Claude Code request comes from: Claude Code identifies itself with
// `X-Claude-Code-Session-Id` (and `x-app: cli`, `user-agent: claude-cli/...`), whatever key it
// authenticates with (a relay key as its API key, or proxy mode).
import type { Attribution } from '../plugins/context.ts';

export const CLAUDE_CODE_CLIENT = 'claude-code';
export const CLAUDE_CODE_SESSION_HEADER = 'x-claude-code-session-id';
const MAX_LENGTH = 256;

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const raw = headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value === '' ? undefined : value.slice(0, MAX_LENGTH);
}

export function isClaudeCode(headers: Headers): boolean {
  return header(headers, CLAUDE_CODE_SESSION_HEADER) !== undefined || (header(headers, 'user-agent') ?? '').startsWith('claude-cli/');
}

/** `client: claude-code` and the session id in `extras`; never a credential. */
export function claudeCodeAttribution(headers: Headers): Attribution {
  const session = header(headers, CLAUDE_CODE_SESSION_HEADER);
  return { client: CLAUDE_CODE_CLIENT, extras: session === undefined ? {} : { [CLAUDE_CODE_SESSION_HEADER]: session } };
}
