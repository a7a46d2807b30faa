// Headers on every answer of the control listener that tell a browser how to treat it. No page
// may frame anything here: a page of the same site (another port of the same host, another name
// under the same domain) gets the SameSite=Strict session cookie sent with its frame, so a framed
// dashboard would be signed in and one click away from rotating a key (clickjacking). Answers are
// never sniffed into another type, and an API answer opened as a page runs nothing. The dashboard
// replaces the content-security-policy on its own page with one that lets it run (admin-ui).
import type { FastifyInstance } from 'fastify';

/** For every answer that is not the dashboard's page: run nothing, load nothing, be framed by no one. */
export const CONTROL_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";

export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('x-frame-options', 'DENY');
    reply.header('content-security-policy', CONTROL_CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
}
