// Usage grouped by budget: GET /api/usage/budgets lists every budget with what the usage log holds
// in its scope (over each budget's current window, or one window given by since/from/to), the
// nearest to its limit first; GET /api/usage/budgets/{id} is one budget's burn-down (cumulative spend per
// bucket over its current window) and its projection to the window's end. Both count as the budget
// does (spend-from-log.ts): the cost in its currency only, the tokens (and requests) of every currency.
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { BudgetGuard } from '../budgets/budget-guard.ts';
import { burnDownSpan, cumulative, projection } from '../budgets/burn-down.ts';
import { totalsInCurrency } from '../budgets/spend-from-log.ts';
import { timeseriesInCurrency } from '../observer/costs-by-currency.ts';
import type { Budget } from '../catalog/kinds.ts';
import type { CatalogSync } from '../catalog/sync.ts';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import { mergeSummaries, mergeTimeseries } from '../observer/merge-reads.ts';
import { parseFilter } from '../observer/query-params.ts';
import { FilterQuerySchema, UsageTotalsSchema } from '../observer/schemas.ts';
import type { TimeseriesPoint, TimeseriesQuery, UsageBackend, UsageFilter } from '../observer/types.ts';
import { BudgetStatusSchema } from './budget-routes.ts';
import { readEach, skippedByAny, type SkippedBackend } from './log-sources.ts';
import { rejectInvalid, usageSources, type LogReader } from './logs-routes.ts';

const Skipped = Type.Optional(Type.Array(Type.Object({ backend: Type.String(), code: Type.String(), message: Type.String() })));
const DateTime = Type.String({ format: 'date-time' });

const BudgetUsageSchema = Type.Object({
  budgetId: Type.String(),
  slug: Type.String(),
  displayName: Type.String(),
  scope: Type.Object({ relayKeyId: Type.Optional(Type.String()), policyId: Type.Optional(Type.String()), modelId: Type.Optional(Type.String()) }),
  window: Type.Unknown({ description: 'daily, weekly, monthly, lifetime or {rollingDays}.' }),
  enabled: Type.Boolean(),
  from: DateTime,
  to: Type.Union([DateTime, Type.Null()]),
  currency: Type.String({ description: 'The budget\'s currency: that of totals.cost.' }),
  totals: Type.Composite([UsageTotalsSchema], {
    description: 'The usage log over the budget\'s scope, as the budget counts it: cost of the requests priced in currency only; requests, errors and tokens of every currency.',
  }),
  status: BudgetStatusSchema,
});

const scopeFilter = (budget: Budget): UsageFilter => {
  const s = budget.spec.scope ?? {};
  return { ...(s.relayKeyId ? { relayKeyId: s.relayKeyId } : {}), ...(s.policyId ? { policyId: s.policyId } : {}), ...(s.modelId ? { modelId: s.modelId } : {}) };
};

export function registerBudgetUsageRoutes(app: FastifyInstance, deps: { observer: LogReader; budgets: BudgetGuard; sync: CatalogSync }): void {
  const allBudgets = () => [...deps.sync.snapshot().byKind('budgets').values()] as unknown as Budget[];

  app.get('/api/usage/budgets', {
    schema: {
      tags: ['usage', 'budgets'], summary: "Usage grouped by budget: each budget's totals over its scope, in its current window (or the window given), the nearest to its limit first (status.fraction descending, then by displayName and budgetId)",
      querystring: Type.Object({ since: FilterQuerySchema.since, from: FilterQuerySchema.from, to: FilterQuerySchema.to }, { additionalProperties: false }),
      response: { 200: Type.Object({ budgets: Type.Array(BudgetUsageSchema), skipped: Skipped }) },
    },
    attachValidation: true,
  }, async (request) => {
    rejectInvalid(request);
    const window = parseFilter(request.query as { since?: string; from?: string; to?: string });
    const sources = usageSources(deps.observer, 'summary', 'a summary');
    const skippedReads: SkippedBackend[][] = [];
    const rows = await Promise.all(allBudgets().map(async (budget) => {
      const status = await deps.budgets.freshStatus(budget);
      const from = window.from ?? new Date(status.windowStart);
      const to = window.from ? window.to ?? null : null;
      const filter: UsageFilter = { ...scopeFilter(budget), from, ...(to ? { to } : {}) };
      const read = await readEach('usage', sources, (b) => (b.summary ? totalsInCurrency(b.summary.bind(b), filter, budget.spec.currency).then((totals) => ({ totals })) : null));
      skippedReads.push(read.skipped);
      return {
        budgetId: budget.metadata.id, slug: budget.metadata.slug, displayName: budget.metadata.displayName, scope: budget.spec.scope ?? {},
        window: budget.spec.window, enabled: budget.spec.enabled !== false, from: from.toISOString(), to: to?.toISOString() ?? null,
        currency: budget.spec.currency, totals: mergeSummaries(read.results).totals, status,
      };
    }));
    rows.sort(nearestToLimitFirst);
    const skipped = skippedByAny(...skippedReads);
    return skipped.length > 0 ? { budgets: rows, skipped } : { budgets: rows };
  });

  app.get('/api/usage/budgets/:id', {
    schema: {
      tags: ['usage', 'budgets'], summary: "One budget's burn-down: cumulative spend per bucket over its current window, and its projection to the window's end",
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: {
        200: Type.Object({
          budgetId: Type.String(),
          from: DateTime,
          to: DateTime,
          bucketSeconds: Type.Integer(),
          status: BudgetStatusSchema,
          points: Type.Array(Type.Object({
            t: DateTime,
            amount: Type.Number({ description: 'Spent in the budget\'s currency (status.currency) from the window\'s start through this bucket.' }),
            tokens: Type.Integer({ description: 'Input and output tokens of every currency from the window\'s start through this bucket.' }),
          })),
          projection: Type.Union([Type.Object({
            at: DateTime, amount: Type.Number(), tokens: Type.Integer(),
            limitReachedAt: Type.Union([DateTime, Type.Null()], { description: 'When the rate so far reaches the limit, if before the window\'s end.' }),
          }), Type.Null()], { description: 'Where the rate so far takes spend by the window\'s end; null for rolling and lifetime budgets.' }),
          skipped: Skipped,
        }),
      },
    },
  }, async (request) => {
    const { id } = request.params as { id: string };
    const budget = allBudgets().find((b) => b.metadata.id === id || b.metadata.slug === id);
    if (!budget) throw new RelayError('RELAY_ERR_NOT_FOUND', `no budget with id or slug ${JSON.stringify(echoedName(id))}`, { field: 'id' });
    const now = Date.now();
    const status = await deps.budgets.freshStatus(budget);
    const span = burnDownSpan(budget, status, now);
    const sources = usageSources(deps.observer, 'timeseries', 'a timeseries');
    const query: TimeseriesQuery = { ...scopeFilter(budget), from: new Date(span.fromMs), to: new Date(Math.min(now, span.toMs)), bucketSeconds: span.bucketSeconds };
    const read = await readEach('usage', sources, (b) => (b.timeseries ? timeseriesInCurrency(b.timeseries.bind(b), query, budget.spec.currency) : null));
    const series = mergeTimeseries(read.results);
    // A lifetime budget counts spend from before the chart's start: it is where the line begins
    // (charted and counted alike: the cost in the budget's currency, the tokens of every currency).
    const charted = series.reduce((sum, p) => ({ amount: sum.amount + p.totals.cost, tokens: sum.tokens + p.totals.input_tokens + p.totals.output_tokens }), { amount: 0, tokens: 0 });
    const offset = budget.spec.window === 'lifetime'
      ? { amount: Math.max(0, status.spentAmount - charted.amount), tokens: Math.max(0, status.spentTokens - charted.tokens) }
      : { amount: 0, tokens: 0 };
    const answer = {
      budgetId: budget.metadata.id, from: new Date(span.fromMs).toISOString(), to: new Date(span.toMs).toISOString(), bucketSeconds: span.bucketSeconds,
      status, points: cumulative(series, offset), projection: projection(status, now),
    };
    return read.skipped.length > 0 ? { ...answer, skipped: read.skipped } : answer;
  });
}

/**
 * The budget nearest to its limit first: status.fraction (spent over limit in its current window)
 * is free of currency, where costs in different currencies do not compare; ties by name, then id.
 */
function nearestToLimitFirst(a: { budgetId: string; displayName: string; status: { fraction: number } }, b: typeof a): number {
  return b.status.fraction - a.status.fraction || byText(a.displayName, b.displayName) || byText(a.budgetId, b.budgetId);
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
