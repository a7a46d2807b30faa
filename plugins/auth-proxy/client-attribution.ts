// Who a proxy-mode request comes from: the kernel's Claude Code recognition (which runs for every
// request, core/attribution/), plus what only proxy mode knows: that it is proxy mode, and the
// host the caller named.
import { claudeCodeAttribution, isClaudeCode } from '../../core/plugin-api/clients.ts';
import { type InboundRequest } from '../../core/plugin-api.ts';

/** `client` and `extras` for the usage event; never a credential. */
export function proxyAttribution(req: InboundRequest, explicitHost: string | undefined): { client?: string; extras: Record<string, string> } {
  const claudeCode = isClaudeCode(req.headers) ? claudeCodeAttribution(req.headers) : undefined;
  const extras: Record<string, string> = Object.assign({ proxy_mode: 'true' }, claudeCode?.extras);
  if (explicitHost !== undefined) extras.explicit_host = explicitHost;
  return claudeCode ? { client: claudeCode.client, extras } : { extras };
}
