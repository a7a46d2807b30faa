// Leaves a fault test's counters for `npm run test:summary`: faults the fake upstreams served
// (scripted answers: errors, resets, stalls, cut streams) and what the observer did with the
// usage events of the run (written, and dropped: lost).
import type { TestRelay } from '../../core/testing.ts';
import type { FakeUpstream } from './fake-upstream.ts';
import { recordCounters } from '../security/counters.ts';

export async function recordFaultCounters(test: string, relay: TestRelay, upstreams: FakeUpstream[], extraFaults = 0): Promise<void> {
  await relay.relay.observer.flush();
  const stats = relay.relay.observer.stats();
  let written = 0;
  let dropped = 0;
  for (const lane of Object.values(stats.usage)) {
    written += lane.written;
    dropped += lane.dropped;
  }
  recordCounters(test, {
    faultsInjected: upstreams.reduce((n, u) => n + u.scripted, 0) + extraFaults,
    eventsExpected: written + dropped + stats.unroutable,
    eventsLost: dropped + stats.unroutable,
  });
}
