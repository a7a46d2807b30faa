// Who a proxy-mode request comes from: Claude Code identifies itself with
// `X-Claude-Code-Session-Id` (and `x-app: cli`, `user-agent: claude-cli/...`).
import type { InboundRequest } from '../../core/plugin-api.ts';

export const CLAUDE_CODE_CLIENT = 'claude-code';
export const SESSION_HEADER = 'x-claude-code-session-id';
const MAX_LENGTH = 256;

function header(req: InboundRequest, name: string): string | undefined {
  const raw = req.headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value === '' ? undefined : value.slice(0, MAX_LENGTH);
}

export function isClaudeCode(req: InboundRequest): boolean {
  return header(req, SESSION_HEADER) !== undefined || /^claude-cli\//.test(header(req, 'user-agent') ?? '');
}

/** `client` and `extras` for the usage event; never a credential. */
export function proxyAttribution(req: InboundRequest, explicitHost: string | undefined): { client?: string; extras: Record<string, string> } {
  const extras: Record<string, string> = { proxy_mode: 'true' };
  const session = header(req, SESSION_HEADER);
  if (session !== undefined) extras[SESSION_HEADER] = session;
  if (explicitHost !== undefined) extras.explicit_host = explicitHost;
  return isClaudeCode(req) ? { client: CLAUDE_CODE_CLIENT, extras } : { extras };
}
