// Dashboard sessions in Postgres, so any instance accepts a session another one created and a
// sign-out ends it everywhere. The token lives only in the cookie; the table keeps its sha256.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/types.ts';
import { hashSecret } from '../crypto/relay-keys.ts';
import type { AdminRole } from './admin-users.ts';

export const SESSION_COOKIE = 'relay_session';

export interface SessionUser {
  userId: string;
  username: string;
  role: AdminRole;
}

export interface CreatedSession {
  /** The cookie value; never stored, never logged. */
  token: string;
  expiresAt: Date;
}

export class SessionStore {
  constructor(private readonly db: Database, private readonly ttlMinutes: number) {}

  async create(userId: string): Promise<CreatedSession> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.ttlMinutes * 60_000);
    await this.db.query('INSERT INTO admin_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [hashSecret(token), userId, expiresAt.toISOString()]);
    // Expired rows are swept here rather than by a timer: sign-ins are rare and every
    // instance signs people in.
    await this.db.query('DELETE FROM admin_sessions WHERE expires_at < now()');
    return { token, expiresAt };
  }

  /** The user of a live session, or null when the token is unknown or expired or the user disabled. */
  async lookup(token: string): Promise<SessionUser | null> {
    const res = await this.db.query<{ user_id: string; username: string; role: AdminRole }>(
      `SELECT s.user_id, u.username, u.role FROM admin_sessions s JOIN admin_users u ON u.id = s.user_id
       WHERE s.token_hash = $1 AND s.expires_at > now() AND u.enabled`, [hashSecret(token)]);
    const row = res.rows[0];
    return row ? { userId: row.user_id, username: row.username, role: row.role } : null;
  }

  async destroy(token: string): Promise<void> {
    await this.db.query('DELETE FROM admin_sessions WHERE token_hash = $1', [hashSecret(token)]);
  }
}
