-- Budget alerts (core/budgets/budget-alerts.ts): one row per budget, window and threshold crossed.
-- The unique key is what makes an alert fire once across instances sharing this database;
-- deliveries holds each webhook's outcome, its target redacted to the origin (URLs hold secrets).
CREATE TABLE budget_alerts (
  id            bigserial PRIMARY KEY,
  budget_id     uuid NOT NULL,
  window_start  timestamptz NOT NULL,
  threshold     double precision NOT NULL,
  fired_at      timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  fraction      double precision NOT NULL,
  spent_amount  double precision NOT NULL,
  spent_tokens  bigint NOT NULL,
  currency      text NOT NULL,
  status        text NOT NULL CHECK (status IN ('fired', 'delivered', 'failed')),
  deliveries    jsonb NOT NULL DEFAULT '[]',
  UNIQUE (budget_id, window_start, threshold)
);
CREATE INDEX budget_alerts_by_budget ON budget_alerts (budget_id, fired_at DESC);
