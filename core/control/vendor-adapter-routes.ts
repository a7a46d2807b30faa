// GET /api/vendor-adapters: the vendor adapters this instance loaded, each with the shapes it
// speaks and the JSON Schema of its hosts' spec.options, so the dashboard's host form can draw
// a vendor's option fields and check them before the server does.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { VendorAdapter } from '../hooks.ts';
import { errorResponses } from './schemas.ts';

export const VendorAdapterInfo = Type.Object({
  id: Type.String({ description: 'The id a provider names in spec.adapter.' }),
  shapes: Type.Array(Type.String(), { description: 'The wire shapes the upstream speaks natively.' }),
  hostOptions: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
    description: "JSON Schema of a host's spec.options for this adapter; null when it takes none.",
  }),
});

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys are not JSON). */
function jsonSchema(schema: unknown): Record<string, unknown> | null {
  return schema === undefined ? null : JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export function registerVendorAdapterRoutes(app: FastifyInstance, deps: { hooks: { adapters: ReadonlyMap<string, VendorAdapter> } }): void {
  app.get('/api/vendor-adapters', {
    schema: {
      summary: 'The loaded vendor adapters, with the schema of their host options', operationId: 'list-vendor-adapters', tags: ['ops'],
      response: { 200: Type.Object({ items: Type.Array(VendorAdapterInfo) }), ...errorResponses },
    },
  }, async () => ({
    items: [...deps.hooks.adapters.values()]
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((a) => ({ id: a.id, shapes: [...a.shapes], hostOptions: jsonSchema(a.hostOptions) })),
  }));
}
