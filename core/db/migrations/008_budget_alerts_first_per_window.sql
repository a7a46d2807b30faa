-- Budget alerts a release from before 007 can record again during a rolling upgrade. Such a release
-- inserts ON CONFLICT (budget_id, window_start, threshold), which needs a unique key on exactly
-- those columns; 007 dropped it for one row per version of what the budget counts. Both hold here:
-- budget_alerts keeps one row per budget, window and threshold (the first version to fire it, or
-- an older release's row, digest ''), and the versions an edit re-armed in the same window go to
-- budget_alerts_rearmed, which inherits it: a SELECT, or UPDATE by id, of budget_alerts (any
-- release's) covers both, and its unique key is not checked against the parent's
-- (core/budgets/alert-store.ts). 007's key stays, so the 007 release's inserts still name a key.
CREATE TABLE budget_alerts_rearmed () INHERITS (budget_alerts);
ALTER TABLE budget_alerts_rearmed ADD PRIMARY KEY (id);
ALTER TABLE budget_alerts_rearmed ADD CONSTRAINT budget_alerts_rearmed_once_per_version UNIQUE (budget_id, window_start, threshold, counts_digest);
CREATE INDEX budget_alerts_rearmed_by_budget ON budget_alerts_rearmed (budget_id, fired_at DESC);
-- Rows 007 recorded for a re-armed version (a later row of the same budget, window and threshold) move over.
WITH moved AS (
  DELETE FROM ONLY budget_alerts a
  WHERE EXISTS (SELECT 1 FROM ONLY budget_alerts f WHERE f.budget_id = a.budget_id AND f.window_start = a.window_start AND f.threshold = a.threshold AND f.id < a.id)
  RETURNING *
)
INSERT INTO budget_alerts_rearmed SELECT * FROM moved;
ALTER TABLE budget_alerts ADD CONSTRAINT budget_alerts_first_per_window UNIQUE (budget_id, window_start, threshold);
