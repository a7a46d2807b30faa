// Which agent session a usage event belongs to, read from the attribution extras the agent
// integrations record: Codex's `thread-id` header (agent-codex; stable for a whole `codex` run),
// Claude Code's `x-claude-code-session-id` (auth-proxy). Backends with a query language compute
// the same expression (log-postgres, log-clickhouse).
import type { UsageEvent } from '../hooks.ts';

/** The extras keys that name a session, in the order they are looked at. */
export const SESSION_EXTRAS = ['thread-id', 'x-claude-code-session-id'] as const;

export function sessionIdOf(event: Pick<UsageEvent, 'extras'>): string | null {
  for (const key of SESSION_EXTRAS) {
    const value = event.extras[key];
    if (value !== undefined && value !== '') return value;
  }
  return null;
}
