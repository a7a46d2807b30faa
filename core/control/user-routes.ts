// /api/users: the dashboard users (admin only, reads included, since the list names who holds
// power), and PUT /api/auth/password: any signed-in user changes their own password, its
// currentPassword guesses throttled with sign-in's (a held session must not make guessing free).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { hashSecret } from '../crypto/relay-keys.ts';
import type { Database } from '../db/types.ts';
import { RelayError } from '../errors.ts';
import { findAdminUser, MAX_PASSWORD_LENGTH, type AdminRole } from './admin-users.ts';
import { decoyHash, verifyPassword } from './passwords.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { errorResponses } from './schemas.ts';
import { createUser, deleteUser, listUsers, updateUser, type UserChange } from './user-store.ts';
import { noteAuditTarget } from './audit-trail.ts';

const Role = Type.Union([Type.Literal('admin'), Type.Literal('viewer')], { description: 'admin: everything; viewer: reads the catalog, logs and usage, never a secret or a change.' });
const Password = Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH, description: 'At least 8 characters; never shown again.' });

const User = Type.Object({
  id: Type.String({ format: 'uuid' }),
  username: Type.String(),
  role: Role,
  enabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

const CreateUserBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 200 }),
  password: Password,
  role: Role,
}, { additionalProperties: false });

const ChangeUserBody = Type.Object({
  role: Type.Optional(Role),
  enabled: Type.Optional(Type.Boolean()),
  password: Type.Optional(Password),
}, { additionalProperties: false, minProperties: 1 });

const UsernameParams = Type.Object({ username: Type.String({ minLength: 1, maxLength: 200 }) });

const OwnPasswordBody = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
  newPassword: Password,
}, { additionalProperties: false });

export function registerUserRoutes(app: FastifyInstance, deps: { db: Database; throttle: LoginThrottle }): void {
  const tags = ['users'];
  const adminOnly = { adminOnly: true };

  app.get('/api/users', {
    config: adminOnly,
    schema: { summary: 'List the dashboard users', operationId: 'list-users', tags, response: { 200: Type.Object({ items: Type.Array(User) }), ...errorResponses } },
  }, async () => ({ items: await listUsers(deps.db) }));

  app.post('/api/users', {
    config: adminOnly,
    schema: { summary: 'Add a dashboard user', operationId: 'create-user', tags, body: CreateUserBody, response: { 201: User, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body as { username: string; password: string; role: AdminRole };
    noteAuditTarget(request, body.username);
    return reply.code(201).send(await createUser(deps.db, body.username, body.password, body.role));
  });

  app.patch('/api/users/:username', {
    config: adminOnly,
    schema: {
      summary: "Change a user's role, enabled flag or password; a new password or a disable ends their sessions",
      operationId: 'update-user', tags, params: UsernameParams, body: ChangeUserBody, response: { 200: User, ...errorResponses },
    },
  }, async (request) => {
    const { username } = request.params as { username: string };
    return updateUser(deps.db, username, request.body as UserChange);
  });

  app.delete('/api/users/:username', {
    config: adminOnly,
    schema: { summary: 'Delete a dashboard user', operationId: 'delete-user', tags, params: UsernameParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...errorResponses } },
  }, async (request, reply) => {
    const { username } = request.params as { username: string };
    await deleteUser(deps.db, username);
    return reply.code(204).send();
  });

  app.put('/api/auth/password', {
    config: { anyRole: true },
    schema: {
      summary: 'Change your own password (a signed-in user); ends your other sessions', operationId: 'change-own-password',
      tags: ['auth'], body: OwnPasswordBody, response: { 204: { type: 'null', description: 'Changed.' }, ...errorResponses },
    },
  }, async (request, reply) => {
    const principal = request.controlPrincipal;
    if (principal?.kind !== 'user') throw new RelayError('RELAY_ERR_BAD_REQUEST', 'only a signed-in user has a password to change; the admin token uses PATCH /api/users/{username}');
    const { currentPassword, newPassword } = request.body as { currentPassword: string; newPassword: string };
    // Counted with the sign-in failures of this user and address, so the two cannot be alternated.
    const attempt = await deps.throttle.admit(principal.username, request.ip);
    const user = await findAdminUser(deps.db, principal.username);
    if (!user || !await verifyPassword(currentPassword, user.passwordHash ?? await decoyHash())) {
      await attempt.failed();
      throw new RelayError('RELAY_ERR_FORBIDDEN', 'currentPassword is wrong', { field: 'currentPassword' });
    }
    await attempt.succeeded();
    await updateUser(deps.db, principal.username, { password: newPassword }, hashSecret(principal.sessionToken));
    return reply.code(204).send();
  });
}
