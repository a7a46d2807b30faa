// Keeps one process.nextTick tick object alive for the life of the process, and with it (through
// the maps' back pointers) every map V8 builds for the tick object literal in Node's
// internal/process/task_queues.js: `{ [async_id_symbol]: id, [trigger_async_id_symbol]: id,
// callback, args }`.
//
// Why: that literal's feedback holds its intermediate maps weakly. A full collection while no tick
// object is alive (Relay's start-up allocates enough for one) clears them; the next nextTick finds
// a map that is not the cleared one, the feedback turns megamorphic for good, and from then on
// every nextTick (Node's streams and http call it several times per request) defines those
// properties through Runtime_DefineKeyedOwnPropertyInLiteral instead of inline stores (Node 20,
// V8 11.3; seen with %DebugPrint(process.nextTick): slots MONOMORPHIC, then "[cleared]", then
// MEGAMORPHIC ~1.3 s after start; test/core/tick-object-maps.test.ts reproduces it). Under perf, a
// chat stream at 16 connections spent ~15 of its ~400 us per request in nextTick and its callers'
// runtime calls before, ~3 after; a bare Node proxy never took that path. End to end the gain is
// under what npm run bench:compare resolves (1.030 chat, 0.991 chat stream, 1.005 messages stream).
//
// If Node changes how it builds tick objects this keeps one small object alive and does nothing
// else.
import { executionAsyncResource } from 'node:async_hooks';

let kept: object | null = null;

/** Idempotent; the capture happens on the next tick (the tick object is the resource of a nextTick callback). */
export function keepTickObjectMapsAlive(): void {
  if (kept !== null) return;
  kept = {}; // claimed: a second call before the tick runs schedules nothing
  process.nextTick(() => {
    kept = executionAsyncResource();
  });
}

keepTickObjectMapsAlive();
