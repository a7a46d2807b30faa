// Serves the dashboard build on a Fastify instance: files of the build, and index.html for
// every other GET that is not an API path (client-side routes, so deep links work).
import { statSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerFor, safePathname } from './request-rules.ts';
import { MISSING_BUILD_HTML } from './missing-build-page.ts';
import { DASHBOARD_CONTENT_SECURITY_POLICY, PLACEHOLDER_CONTENT_SECURITY_POLICY } from './page-policy.ts';

export interface DashboardOptions {
  /** Absolute path of the build (admin-ui/dist). */
  root: string;
  log: { warn(msg: string): void; info(msg: string): void };
}

function isFile(absolute: string): boolean {
  try {
    return statSync(absolute).isFile();
  } catch {
    return false;
  }
}

/**
 * Registers the dashboard routes in their own encapsulated scope (the sendFile decorator stays
 * local). Routes are GET `/` and GET `/*`; Fastify prefers any static or parametric route, so
 * API routes always win, and an unknown /api/... path falls through to the listener's JSON 404.
 */
export async function serveDashboard(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const root = path.resolve(options.root);
  const indexFile = path.join(root, 'index.html');
  let built = isFile(indexFile);
  if (!built) options.log.warn(`admin-ui: no dashboard build at ${root}; run \`npm run build:ui\`. Serving a placeholder page until it exists.`);

  await app.register(async (scope) => {
    await scope.register(fastifyStatic, { root, serve: false });

    const handle = (request: FastifyRequest, reply: FastifyReply) => {
      // Checked per request until found, so a build made after start is picked up without a restart.
      if (!built) built = isFile(indexFile);
      const answer = answerFor(safePathname(request.url), (relative) => built && isFile(path.join(root, relative)));
      if (answer.kind === 'not-found') return reply.callNotFound();
      if (!built) {
        return reply.code(503).type('text/html; charset=utf-8').header('cache-control', 'no-store')
          .header('content-security-policy', PLACEHOLDER_CONTENT_SECURITY_POLICY).send(MISSING_BUILD_HTML);
      }
      // Every file of the build (index.html asked for by name included) under the page's policy.
      reply.header('content-security-policy', DASHBOARD_CONTENT_SECURITY_POLICY);
      if (answer.kind === 'file') {
        // Files under assets/ carry a content hash in their name, so they never change.
        const hashed = answer.file.startsWith('assets/');
        if (!hashed) reply.header('cache-control', 'no-cache');
        return reply.sendFile(answer.file, hashed ? { maxAge: '365d', immutable: true } : { cacheControl: false });
      }
      reply.header('cache-control', 'no-cache');
      return reply.type('text/html; charset=utf-8').sendFile('index.html', { cacheControl: false });
    };

    scope.get('/', { schema: { hide: true } }, handle);
    scope.get('/*', { schema: { hide: true } }, handle);
  });
}
