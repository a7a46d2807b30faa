// Counters a reliability or security test leaves behind for `npm run test:summary`: one JSON file
// per test under test/.output/ (git-ignored), replaced on each run.
//
//   recordCounters('fuzz-inference', { badInputs: 412 });
//   recordCounters('failover', { faultsInjected: 37, eventsExpected: 120, eventsLost: 0 });
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const OUTPUT_DIR = path.resolve(import.meta.dirname, '../.output');

export interface Counters {
  /** Upstream faults a test injected (resets, stalls, 5xx, 429, ...). */
  faultsInjected?: number;
  /** Malformed or hostile inputs a test sent. */
  badInputs?: number;
  /** Usage events a test expected to be recorded, and how many of them never were. */
  eventsExpected?: number;
  eventsLost?: number;
  /** Secrets a test searched for, and the places it searched. */
  secretsChecked?: number;
  placesSearched?: number;
  /** Anything else worth printing. */
  [other: string]: number | undefined;
}

export function recordCounters(test: string, counters: Counters): void {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const file = path.join(OUTPUT_DIR, `${test}.json`);
  writeFileSync(file, `${JSON.stringify({ test, writtenAt: new Date().toISOString(), counters }, null, 2)}\n`);
}
