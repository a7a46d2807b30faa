// GET /v1/budget on the inference port: the budgets that can refuse the calling relay key's
// requests (its own, its policy's, its models', and the global ones), each with its status, so a
// client or a script can check its allowance with the key it already holds.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Budget, Model } from '../catalog/kinds.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Principal } from '../hooks.ts';
import type { BudgetGuard } from './budget-guard.ts';

export interface AllowanceRouteDeps {
  budgets: BudgetGuard;
  snapshot: () => CatalogSnapshot;
  authenticate: (request: FastifyRequest) => Promise<Principal>;
  reachableModels: (principal: Principal) => Model[];
}

function covers(budget: Budget, principal: Principal, modelIds: Set<string>): boolean {
  const s = budget.spec.scope ?? {};
  if (s.relayKeyId !== undefined) return s.relayKeyId === principal.relayKey.metadata.id;
  if (s.policyId !== undefined) return s.policyId === principal.policy.metadata.id;
  if (s.modelId !== undefined) return modelIds.has(s.modelId);
  return true;
}

export function registerAllowanceRoute(app: FastifyInstance, deps: AllowanceRouteDeps): void {
  app.get('/v1/budget', {
    config: { shape: 'canonical' },
    schema: { summary: 'The budgets that can refuse the calling relay key\'s requests, with what each has spent and when it resets', tags: ['budgets'], security: [{ relayKey: [] }] },
  }, async (request) => {
    const principal = await deps.authenticate(request);
    const modelIds = new Set(deps.reachableModels(principal).map((m) => m.metadata.id));
    const budgets = ([...deps.snapshot().byKind('budgets').values()] as unknown as Budget[])
      .filter((b) => b.spec.enabled !== false && covers(b, principal, modelIds));
    return {
      budgets: await Promise.all(budgets.map(async (b) => ({
        id: b.metadata.id, slug: b.metadata.slug, displayName: b.metadata.displayName,
        scope: b.spec.scope ?? {}, window: b.spec.window, timezone: b.spec.timezone, action: b.spec.action,
        ...await deps.budgets.freshStatus(b),
      }))),
    };
  });
}
