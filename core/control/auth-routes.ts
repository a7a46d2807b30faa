// POST /api/auth/login, POST /api/auth/logout, GET /api/auth/whoami.
// Sign-in answers the same 401 for an unknown user and a wrong password, and runs scrypt in
// both cases, so neither the message nor the time tells which it was. Failed attempts are
// throttled per username and per client address (login-throttle.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/types.ts';
import { RelayError } from '../errors.ts';
import { findAdminUser, MAX_PASSWORD_LENGTH } from './admin-users.ts';
import { originMatchesHost } from './csrf.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { decoyHash, verifyPassword } from './passwords.ts';
import { errorResponses } from './schemas.ts';
import { clearSessionCookie, sessionCookie } from './session-cookie.ts';
import type { SessionStore } from './sessions.ts';

const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 200 }),
  password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
}, { additionalProperties: false });

const UserBody = Type.Object({ user: Type.Object({ username: Type.String() }) });

const WhoAmI = Type.Object({
  kind: Type.Union([Type.Literal('user'), Type.Literal('admin-token')]),
  username: Type.Optional(Type.String()),
  /** What the caller may do; the admin token is always admin. */
  role: Type.Union([Type.Literal('admin'), Type.Literal('viewer')]),
});

export interface AuthRoutesDeps {
  db: Database;
  sessions: SessionStore;
  throttle: LoginThrottle;
  secureCookies: boolean;
}

export function registerAuthRoutes(app: FastifyInstance, deps: AuthRoutesDeps): void {
  const tags = ['auth'];

  app.post('/api/auth/login', {
    config: { public: true },
    schema: {
      summary: 'Sign in; sets the relay_session cookie', operationId: 'login', tags, body: LoginBody,
      response: { 200: UserBody, ...errorResponses },
    },
  }, async (request, reply) => {
    const { username, password } = request.body as { username: string; password: string };
    // Login CSRF: a cross-site page must not sign a browser into someone else's account.
    if (!originMatchesHost(request)) throw new RelayError('RELAY_ERR_CSRF', 'the Origin of this request is not this host');
    // Counted before the password is checked, in one step with the lock check (login-throttle.ts).
    const attempt = await deps.throttle.admit(username, request.ip);
    const user = await findAdminUser(deps.db, username);
    const valid = await verifyPassword(password, user?.passwordHash ?? await decoyHash());
    // A disabled user gets the same answer as a wrong password: it reveals nothing about the account.
    if (!user || !valid || !user.enabled) {
      await attempt.failed();
      throw new RelayError('RELAY_ERR_UNAUTHENTICATED', 'wrong username or password');
    }
    await attempt.succeeded();
    const session = await deps.sessions.create(user.id);
    reply.header('set-cookie', sessionCookie(app, request, session.token, session.expiresAt, deps.secureCookies));
    reply.header('cache-control', 'no-store');
    return { user: { username: user.username } };
  });

  app.post('/api/auth/logout', {
    config: { anyRole: true },
    schema: { summary: 'Sign out: ends the session on every instance', operationId: 'logout', tags, response: { 204: { type: 'null', description: 'Signed out.' }, ...errorResponses } },
  }, async (request, reply) => {
    const principal = request.controlPrincipal;
    if (principal?.kind === 'user') await deps.sessions.destroy(principal.sessionToken);
    reply.header('set-cookie', clearSessionCookie(app, request, deps.secureCookies));
    return reply.code(204).send();
  });

  app.get('/api/auth/whoami', {
    schema: { summary: 'Who is calling: a signed-in user or the admin token', operationId: 'whoami', tags, response: { 200: WhoAmI, ...errorResponses } },
  }, async (request) => {
    const principal = request.controlPrincipal;
    if (principal?.kind === 'user') return { kind: 'user' as const, username: principal.username, role: principal.role };
    return { kind: 'admin-token' as const, role: 'admin' as const };
  });
}
