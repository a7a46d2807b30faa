// The digest of what a version of a budget counts (budget-guard.ts whatCounts: scope, window, time
// zone, currency). Its shared spend total (valkey-spend.ts) and its alerts' claims (budget-alerts.ts)
// are per digest, so an edit of any of those counts and alerts afresh; an edit of anything else does not.
import { createHash } from 'node:crypto';

export function countsDigest(counts: string): string {
  return createHash('sha256').update(counts).digest('hex').slice(0, 16);
}
