// The dashboard users' list, behind /api/users: create, change (role, enabled, password) and
// delete, each in one transaction that refuses to leave no enabled admin user behind.
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/types.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import { checkCredentialsShape, checkPasswordShape, type AdminRole } from './admin-users.ts';
import { hashPassword } from './passwords.ts';

/** A user as the API shows it: never the password hash. */
export interface PublicUser {
  id: string;
  username: string;
  role: AdminRole;
  enabled: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface UserChange {
  role?: AdminRole;
  enabled?: boolean;
  password?: string;
}

interface UserRow { id: string; username: string; role: AdminRole; enabled: boolean; created_at: Date | string; updated_at: Date | string }

const COLUMNS = 'id, username, role, enabled, created_at, updated_at';

function toPublic(row: UserRow): PublicUser {
  return {
    id: row.id, username: row.username, role: row.role, enabled: row.enabled,
    createdAt: new Date(row.created_at).toISOString(), updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export async function listUsers(db: Queryable): Promise<PublicUser[]> {
  const res = await db.query<UserRow>(`SELECT ${COLUMNS} FROM admin_users ORDER BY username`);
  return res.rows.map(toPublic);
}

export async function createUser(db: Database, username: string, password: string, role: AdminRole): Promise<PublicUser> {
  checkCredentialsShape(username, password);
  const passwordHash = await hashPassword(password);
  const res = await db.query<UserRow>(
    `INSERT INTO admin_users (id, username, password_hash, role) VALUES ($1, $2, $3, $4)
     ON CONFLICT (username) DO NOTHING RETURNING ${COLUMNS}`, [randomUUID(), username, passwordHash, role]);
  if (!res.rows[0]) throw new RelayError('RELAY_ERR_CONFLICT', `a user named ${echoedName(username)} already exists`, { field: 'username' });
  return toPublic(res.rows[0]);
}

/**
 * Locks every enabled admin's row, in one order, before a change that could remove one: changes
 * that could each leave the last admin take turns, so each counts what the one before it left
 * (checking its own row only, two demotions at once each saw the other admin and both passed).
 */
async function lockAdmins(tx: Queryable): Promise<void> {
  await tx.query("SELECT id FROM admin_users WHERE role = 'admin' AND enabled ORDER BY id FOR UPDATE");
}

/** Throws when no enabled admin user would be left: someone must be able to sign in and change things. */
async function assertAnAdminRemains(tx: Queryable, what: string): Promise<void> {
  const res = await tx.query<{ n: string | number }>("SELECT count(*) AS n FROM admin_users WHERE role = 'admin' AND enabled");
  if (Number(res.rows[0]?.n ?? 0) === 0) throw new RelayError('RELAY_ERR_CONFLICT', `${what} would leave no enabled admin user`);
}

/**
 * Changes a user. A new password or a disable ends the user's sessions, except `keepSession`
 * (the caller's own, when they change their own password).
 */
export async function updateUser(db: Database, username: string, change: UserChange, keepSessionHash?: string): Promise<PublicUser> {
  if (change.password !== undefined) checkPasswordShape(change.password);
  const passwordHash = change.password === undefined ? null : await hashPassword(change.password);
  return db.transaction(async (tx) => {
    await lockAdmins(tx);
    const current = (await tx.query<UserRow>(`SELECT ${COLUMNS} FROM admin_users WHERE username = $1 FOR UPDATE`, [username])).rows[0];
    if (!current) throw new RelayError('RELAY_ERR_NOT_FOUND', `no user named ${echoedName(username)}`);
    const res = await tx.query<UserRow>(
      `UPDATE admin_users SET role = coalesce($2, role), enabled = coalesce($3, enabled),
         password_hash = coalesce($4, password_hash), updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [current.id, change.role ?? null, change.enabled ?? null, passwordHash]);
    if (current.role === 'admin' && current.enabled) await assertAnAdminRemains(tx, `changing ${echoedName(username)}`);
    if (passwordHash !== null || change.enabled === false) {
      await tx.query('DELETE FROM admin_sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2', [current.id, keepSessionHash ?? null]);
    }
    return toPublic(res.rows[0]!);
  });
}

export async function deleteUser(db: Database, username: string): Promise<void> {
  await db.transaction(async (tx) => {
    await lockAdmins(tx);
    const res = await tx.query<UserRow>(`DELETE FROM admin_users WHERE username = $1 RETURNING ${COLUMNS}`, [username]);
    const gone = res.rows[0];
    if (!gone) throw new RelayError('RELAY_ERR_NOT_FOUND', `no user named ${echoedName(username)}`);
    if (gone.role === 'admin' && gone.enabled) await assertAnAdminRemains(tx, `deleting ${echoedName(username)}`);
  });
}
