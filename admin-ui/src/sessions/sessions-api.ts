// Calls for agent sessions (Codex threads, Claude Code sessions).
import { api } from '../api/client.ts';
import type { SessionDetail, SessionsAnswer } from '../api/types.ts';

export type SessionSort = 'cost' | 'recent';

export const listSessions = (since: string, sort: SessionSort) => api.get<SessionsAnswer>('/api/usage/sessions', { since, sort, limit: 200 });

/** One key's session with the id; with no key, every request with the id. */
export const getSession = (sessionId: string, relayKeyId: string | null, cursor: string | null = null) =>
  api.get<SessionDetail>(`/api/usage/sessions/${encodeURIComponent(sessionId)}`, { relayKeyId, cursor, limit: 100 });
