-- Budget alerts once per budget, version of what it counts, window and threshold
-- (core/budgets/budget-alerts.ts): an edit of a budget's scope, window, time zone or currency
-- arms its thresholds again in the same window; an edit of its limits or alerts does not.
-- counts_digest is that version's digest (core/budgets/counts-digest.ts); rows from before it
-- keep '', which every version of their window counts as fired (alert-store.ts).
-- Rolling upgrade: older instances insert ON CONFLICT (budget_id, window_start, threshold), which
-- no longer names a unique key: their alerts fail to record (and so are not sent) until they are
-- replaced; the newer instances fire them.
ALTER TABLE budget_alerts ADD COLUMN counts_digest text NOT NULL DEFAULT '';
ALTER TABLE budget_alerts DROP CONSTRAINT budget_alerts_budget_id_window_start_threshold_key;
ALTER TABLE budget_alerts ADD CONSTRAINT budget_alerts_once_per_version UNIQUE (budget_id, window_start, threshold, counts_digest);
