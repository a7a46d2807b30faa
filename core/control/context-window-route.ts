// GET /api/models/{ref}/context-window: the window Relay routes a model's prompts by, and where it
// comes from (the model's spec.contextWindow, or the shipped table for a binding's upstream model,
// core/context-windows), as this instance's catalog has it. The dashboard's model page shows it.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CatalogSync } from '../catalog/sync.ts';
import { effectiveWindow } from '../context-windows/lookup.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import { errorResponses, RefParams } from './schemas.ts';

export const ContextWindowSchema = Type.Object({
  tokens: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no window known, prompts are not routed by size.' }),
  source: Type.Union([Type.Literal('spec'), Type.Literal('table'), Type.Null()], { description: "spec: the model's contextWindow; table: Relay's table, for upstreamModel." }),
  upstreamModel: Type.Optional(Type.String({ description: 'The binding upstream model whose table entry gave the window.' })),
  tableModel: Type.Optional(Type.String({ description: 'The table entry it resolved to.' })),
  sourcePage: Type.Optional(Type.String({ description: "The vendor's page the table's number was read from." })),
});

export function registerContextWindowRoute(app: FastifyInstance, deps: { sync: CatalogSync }): void {
  app.get('/api/models/:ref/context-window', {
    schema: {
      summary: "A model's effective context window and its source", operationId: 'get-model-context-window', tags: ['models'], params: RefParams,
      response: { 200: ContextWindowSchema, ...errorResponses },
    },
  }, async (request) => {
    const { ref } = request.params as { ref: string };
    const snapshot = deps.sync.snapshot();
    const model = snapshot.models.get(ref) ?? snapshot.modelBySlug(ref);
    if (!model) throw new RelayError('RELAY_ERR_NOT_FOUND', `no model with slug or id ${JSON.stringify(echoedName(ref))}`);
    const window = effectiveWindow(model);
    if (!window) return { tokens: null, source: null };
    if (window.source === 'spec') return { tokens: window.tokens, source: 'spec' };
    return { tokens: window.tokens, source: 'table', upstreamModel: window.upstreamModel, tableModel: window.known!.model, sourcePage: window.known!.source };
  });
}
