// The relay_session cookie: HttpOnly, SameSite=Strict, Path=/, Secure when configured.
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE } from './sessions.ts';

export function sessionCookie(app: FastifyInstance, token: string, expiresAt: Date, secure: boolean): string {
  return app.serializeCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/', secure, expires: expiresAt });
}

export function clearSessionCookie(app: FastifyInstance, secure: boolean): string {
  return app.serializeCookie(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/', secure, expires: new Date(0), maxAge: 0 });
}
