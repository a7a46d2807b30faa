// Dashboard users in Postgres (admin_users). The first one comes from RELAY_ADMIN_USERNAME and
// RELAY_ADMIN_PASSWORD at first start; /api/users (user-routes.ts) and the `relay` CLI add
// users, set roles and reset passwords.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Database, Queryable } from '../db/types.ts';
import { RelayError, StartupError } from '../errors.ts';
import { hashPassword } from './passwords.ts';

export const ADMIN_ROLES = ['admin', 'viewer'] as const;
/** admin: everything; viewer: reads the catalog, logs and usage, never a secret or a change. */
export type AdminRole = typeof ADMIN_ROLES[number];

export interface AdminUser {
  id: string;
  username: string;
  passwordHash: string;
  role: AdminRole;
  enabled: boolean;
}

const USERNAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

/** Throws RELAY_ERR_BAD_REQUEST (naming the field, never echoing the password) when invalid. */
export function checkCredentialsShape(username: string, password: string): void {
  if (!USERNAME_RE.test(username)) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', 'username: 1-100 letters, digits, dots, dashes, underscores or @, starting with a letter or digit', { field: 'username' });
  }
  checkPasswordShape(password);
}

export function checkPasswordShape(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', `password: must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`, { field: 'password' });
  }
}

export async function findAdminUser(db: Queryable, username: string): Promise<AdminUser | null> {
  const res = await db.query<{ id: string; username: string; password_hash: string; role: AdminRole; enabled: boolean }>(
    'SELECT id, username, password_hash, role, enabled FROM admin_users WHERE username = $1', [username]);
  const row = res.rows[0];
  return row ? { id: row.id, username: row.username, passwordHash: row.password_hash, role: row.role, enabled: row.enabled } : null;
}

/**
 * Adds a user (an admin unless `role` says), or sets a new password (and the role, when given)
 * for an existing one. A reset ends every session of that user on every instance.
 */
export async function upsertAdminUser(db: Database, username: string, password: string, role?: AdminRole): Promise<{ created: boolean }> {
  checkCredentialsShape(username, password);
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    const existing = await tx.query<{ id: string }>('SELECT id FROM admin_users WHERE username = $1 FOR UPDATE', [username]);
    if (existing.rows[0]) {
      await tx.query('UPDATE admin_users SET password_hash = $2, role = coalesce($3, role), updated_at = now() WHERE id = $1', [existing.rows[0].id, passwordHash, role ?? null]);
      await tx.query('DELETE FROM admin_sessions WHERE user_id = $1', [existing.rows[0].id]);
      return { created: false };
    }
    await tx.query('INSERT INTO admin_users (id, username, password_hash, role) VALUES ($1, $2, $3, $4)', [randomUUID(), username, passwordHash, role ?? 'admin']);
    return { created: true };
  });
}

export type InitialAdminOutcome = 'created' | 'users-exist' | 'not-configured';

/**
 * At start-up: when no dashboard user exists yet and RELAY_ADMIN_USERNAME and
 * RELAY_ADMIN_PASSWORD are set, creates that user. Never changes an existing user (use the
 * CLI for that). Safe when several instances start at once.
 */
export async function ensureInitialAdmin(db: Database, env: Record<string, string | undefined>, log: Pick<Logger, 'info' | 'warn'>): Promise<InitialAdminOutcome> {
  const username = env.RELAY_ADMIN_USERNAME?.trim();
  const password = env.RELAY_ADMIN_PASSWORD;
  const count = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM admin_users');
  if (Number(count.rows[0]?.n ?? 0) > 0) return 'users-exist';
  if (!username || !password) {
    log.warn('no dashboard user exists: set RELAY_ADMIN_USERNAME and RELAY_ADMIN_PASSWORD for the first start, or add one with the relay CLI; RELAY_ADMIN_TOKEN still works for the API');
    return 'not-configured';
  }
  try {
    checkCredentialsShape(username, password);
  } catch (err) {
    throw new StartupError(`RELAY_ADMIN_USERNAME / RELAY_ADMIN_PASSWORD: ${(err as Error).message}`);
  }
  const passwordHash = await hashPassword(password);
  // Inserted only while the table is still empty, so two instances starting together
  // create one user, and a user added meanwhile through the CLI is left alone.
  const res = await db.query(
    `INSERT INTO admin_users (id, username, password_hash)
     SELECT $1, $2, $3 WHERE NOT EXISTS (SELECT 1 FROM admin_users)
     ON CONFLICT (username) DO NOTHING`,
    [randomUUID(), username, passwordHash]);
  if ((res.affectedRows ?? 0) > 0) {
    log.info({ username }, 'created the first dashboard user from RELAY_ADMIN_USERNAME');
    return 'created';
  }
  return 'users-exist';
}
