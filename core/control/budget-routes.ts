// GET /api/budgets/{id}/status: what a budget has spent in its current window, what is left, and
// when it resets, as this instance counts it (core/budgets/budget-guard.ts).
// GET /api/budgets/{id}/alerts: the alerts it fired, each webhook's outcome (targets shown by origin only).
// GET /api/logs/alerts: every budget's alerts, the latest first, beside the request log.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { BudgetGuard } from '../budgets/budget-guard.ts';
import type { BudgetAlerts } from '../budgets/budget-alerts.ts';
import type { Budget } from '../catalog/kinds.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';

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

const AlertSchema = Type.Object({
  id: Type.String(),
  budgetId: Type.String(),
  windowStart: Type.String({ format: 'date-time', description: 'The window the alert fired in (for a rolling budget, the period of its length it fell in).' }),
  threshold: Type.Number({ description: 'The alertAt fraction crossed.' }),
  firedAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  fraction: Type.Number({ description: 'Spent over limit when it fired.' }),
  spentAmount: Type.Number(),
  spentTokens: Type.Integer(),
  currency: Type.String(),
  status: Type.Union([Type.Literal('fired'), Type.Literal('delivered'), Type.Literal('failed')], { description: 'fired: recorded, deliveries under way (or no webhook); delivered: every webhook answered 2xx; failed: one gave up.' }),
  deliveries: Type.Array(Type.Object({
    target: Type.String({ description: "The webhook's origin only: its URL may hold a secret." }),
    format: Type.Union([Type.Literal('json'), Type.Literal('slack')]),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer(),
    lastError: Type.Union([Type.String(), Type.Null()]),
    deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  })),
});

export function registerBudgetRoutes(app: FastifyInstance, deps: { budgets: BudgetGuard; alerts?: BudgetAlerts; sync: CatalogSync }): void {
  const findBudget = (id: string): Budget => {
    const all = deps.sync.snapshot().byKind('budgets');
    const budget = (all.get(id) ?? [...all.values()].find((b) => b.metadata.slug === id)) as Budget | undefined;
    if (!budget) throw new RelayError('RELAY_ERR_NOT_FOUND', `no budget with id or slug ${JSON.stringify(echoedName(id))}`, { field: 'id' });
    return budget;
  };

  app.get('/api/budgets/:id/alerts', {
    schema: {
      tags: ['budgets'], summary: "A budget's alerts, the latest first: the fraction crossed, the window, and each webhook's outcome",
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
      querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })) }, { additionalProperties: false }),
      response: { 200: Type.Object({ alerts: Type.Array(AlertSchema) }) },
    },
  }, async (request) => {
    const budget = findBudget((request.params as { id: string }).id);
    const { limit } = request.query as { limit?: number };
    return { alerts: deps.alerts ? await deps.alerts.list(budget.metadata.id, limit ?? 100) : [] };
  });

  app.get('/api/logs/alerts', {
    schema: {
      tags: ['logs', 'budgets'], summary: "Every budget's alerts, the latest fired first, with each webhook's outcome",
      querystring: Type.Object({
        status: Type.Optional(Type.Union([Type.Literal('fired'), Type.Literal('delivered'), Type.Literal('failed')])),
        since: Type.Optional(Type.String({ format: 'date-time', description: 'Alerts fired at or after this time.' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ alerts: Type.Array(Type.Intersect([AlertSchema, Type.Object({ budgetSlug: Type.Union([Type.String(), Type.Null()], { description: 'null once the budget is deleted.' }) })])) }) },
    },
  }, async (request) => {
    const { status, since, limit } = request.query as { status?: 'fired' | 'delivered' | 'failed'; since?: string; limit?: number };
    if (!deps.alerts) return { alerts: [] };
    const budgets = deps.sync.snapshot().byKind('budgets');
    const alerts = await deps.alerts.listAll({ status, since, limit: limit ?? 100 });
    return { alerts: alerts.map((a) => ({ ...a, budgetSlug: budgets.get(a.budgetId)?.metadata.slug ?? null })) };
  });

  app.get('/api/budgets/:id/status', {
    schema: {
      tags: ['budgets'], summary: "A budget's spend in its current window, what is left and when it resets",
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: { 200: BudgetStatusSchema },
    },
  }, async (request) => {
    return deps.budgets.freshStatus(findBudget((request.params as { id: string }).id));
  });
}
