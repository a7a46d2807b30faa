// GET /api/budgets/{id}/status: what a budget has spent in its current window, what is left, and
// when it resets, as this instance counts it (core/budgets/budget-guard.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { BudgetGuard } from '../budgets/budget-guard.ts';
import type { Budget } from '../catalog/kinds.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import { RelayError } from '../errors.ts';

const Nullable = <T extends ReturnType<typeof Type.Number>>(schema: T) => Type.Union([schema, Type.Null()]);

export const BudgetStatusSchema = Type.Object({
  budgetId: Type.String(),
  windowStart: Type.String({ format: 'date-time' }),
  resetsAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null for rolling and lifetime budgets.' }),
  spentAmount: Type.Number(),
  spentTokens: Type.Integer(),
  limitAmount: Nullable(Type.Number()),
  limitTokens: Nullable(Type.Number()),
  remainingAmount: Nullable(Type.Number()),
  remainingTokens: Nullable(Type.Number()),
  currency: Type.String(),
  fraction: Type.Number({ description: 'Spent over limit: the larger of money and tokens.' }),
  exceeded: Type.Boolean(),
});

export function registerBudgetRoutes(app: FastifyInstance, deps: { budgets: BudgetGuard; sync: CatalogSync }): void {
  app.get('/api/budgets/:id/status', {
    schema: {
      tags: ['budgets'], summary: "A budget's spend in its current window, what is left and when it resets",
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { 200: BudgetStatusSchema },
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const all = deps.sync.snapshot().byKind('budgets');
    const budget = (all.get(id) ?? [...all.values()].find((b) => b.metadata.slug === id)) as Budget | undefined;
    if (!budget) throw new RelayError('RELAY_ERR_NOT_FOUND', `no budget with id or slug ${JSON.stringify(id)}`, { field: 'id' });
    return deps.budgets.status(budget);
  });
}
