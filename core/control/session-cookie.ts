// The relay_session cookie: HttpOnly, SameSite=Strict, Path=/, and Secure whenever the browser
// reached Relay over TLS: the socket is TLS, or a trusted proxy (server.trustProxy) says so in
// X-Forwarded-Proto, or admin.secureCookies forces it (a TLS proxy that sends no such header).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from './sessions.ts';

/** Fastify's request.protocol is "https" for a TLS socket, or from X-Forwarded-Proto only when trustProxy is set. */
function isSecure(request: FastifyRequest, alwaysSecure: boolean): boolean {
  return alwaysSecure || request.protocol === 'https';
}

export function sessionCookie(app: FastifyInstance, request: FastifyRequest, token: string, expiresAt: Date, alwaysSecure: boolean): string {
  const secure = isSecure(request, alwaysSecure);
  return app.serializeCookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/', secure, expires: expiresAt });
}

export function clearSessionCookie(app: FastifyInstance, request: FastifyRequest, alwaysSecure: boolean): string {
  const secure = isSecure(request, alwaysSecure);
  return app.serializeCookie(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/', secure, expires: new Date(0), maxAge: 0 });
}
