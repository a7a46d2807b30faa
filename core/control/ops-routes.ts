// Operational routes: GET /api/version (public), POST /api/master-key/generate (mints a
// candidate RELAY_MASTER_KEY, stores nothing), POST /api/reload (full snapshot rebuild, a
// manual fallback to NOTIFY), GET /api/openapi.json.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogSync } from '../catalog/sync.ts';
import { generateMasterKey } from '../crypto/sealing.ts';
import { RelayError } from '../errors.ts';
import { errorResponses } from './schemas.ts';
import { SECURITY_SCHEMES } from './route-security.ts';

export const SERVICE_NAME = 'relay';

export function registerOpsRoutes(app: FastifyInstance, deps: { version: string; sync: CatalogSync }): void {
  const tags = ['ops'];

  app.get('/api/version', {
    config: { public: true },
    schema: {
      summary: 'The build version (public)', operationId: 'version', tags,
      response: { 200: Type.Object({ name: Type.String(), version: Type.String() }) },
    },
  }, async () => ({ name: SERVICE_NAME, version: deps.version }));

  app.post('/api/master-key/generate', {
    schema: {
      summary: 'Mint a candidate RELAY_MASTER_KEY (32 random bytes, base64); nothing is stored', operationId: 'generate-master-key', tags,
      response: { 200: Type.Object({ masterKey: Type.String() }), ...errorResponses },
    },
  }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return { masterKey: generateMasterKey() };
  });

  app.post('/api/reload', {
    schema: {
      summary: 'Rebuild the catalog snapshot from Postgres in full (a manual fallback)', operationId: 'reload', tags,
      response: {
        200: Type.Object({ version: Type.Integer({ description: "This instance's snapshot build counter." }), rebuiltAt: Type.String({ format: 'date-time' }) }),
        ...errorResponses,
      },
    },
  }, async () => {
    // rebuild() logs a failure and resolves false (the periodic check retries); report it here.
    // (Comparing rebuiltAt before and after said 503 for two rebuilds in the same millisecond.)
    if (!(await deps.sync.rebuild('api'))) throw new RelayError('RELAY_ERR_DATABASE_UNAVAILABLE', 'the snapshot could not be rebuilt: the database did not answer');
    const snapshot = deps.sync.snapshot();
    return { version: snapshot.version, rebuiltAt: new Date(deps.sync.rebuiltAt || snapshot.builtAt).toISOString() };
  });

  app.get('/api/openapi.json', {
    schema: {
      summary: 'This API as OpenAPI 3.1', operationId: 'openapi', tags,
      response: { 200: Type.Object({}, { additionalProperties: true }), ...errorResponses },
    },
  }, async () => {
    const document = app.swagger() as { components?: { securitySchemes?: Record<string, unknown> } };
    // The kernel passes the schemes to the listener; they are filled in here too so the
    // document is complete whoever built the listener.
    document.components = { ...document.components, securitySchemes: { ...SECURITY_SCHEMES, ...document.components?.securitySchemes } };
    return document;
  });
}
