// Calls for budgets: their spend (usage grouped by budget), one budget's burn-down, its alerts.
import { api } from '../api/client.ts';
import type { BudgetAlert, BudgetBurnDown, BudgetUsage } from '../api/types.ts';

export const listBudgetUsage = () => api.get<{ budgets: BudgetUsage[] }>('/api/usage/budgets');

export const getBurnDown = (budgetId: string) => api.get<BudgetBurnDown>(`/api/usage/budgets/${encodeURIComponent(budgetId)}`);

export const listAlerts = (budgetId: string) => api.get<{ alerts: BudgetAlert[] }>(`/api/budgets/${encodeURIComponent(budgetId)}/alerts`, { limit: 50 });
