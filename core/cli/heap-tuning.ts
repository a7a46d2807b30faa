// V8's allocation-site pretenuring, off for the service: once most objects from a site survive a
// scavenge, V8 allocates the site's objects old, and an agent turn's 400 KB request buffers then
// wait for a full collection each, not the next scavenge (test/bench/RESULTS.md, "Pretenuring and
// the agent turn"). Node refuses the flag in NODE_OPTIONS; V8 reads it at each collection.
import v8 from 'node:v8';

export const PRETENURING_OFF = '--no-allocation-site-pretenuring';

export function turnOffPretenuring(): void {
  v8.setFlagsFromString(PRETENURING_OFF);
}
