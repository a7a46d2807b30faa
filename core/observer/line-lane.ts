// The queue of a usage backend that takes whole lines (UsageBackend.writeLineBuffers): events are
// serialized as JSON lines into a LineArena and the batch queue holds each line's byte length
// (see line-arena.ts for why the lines live outside the JS heap).
//
// Events are serialized at the end of the event-loop turn that recorded them, all of that turn's
// in one loop, instead of one by one as each request finishes: the serializer then runs with its
// code and the event's object shape in cache, not cold in the middle of a request's work (warm,
// JSON.stringify took 1.6 us for a bench event; inside a request it measured 5-7 us). Measured
// with `npm run bench:logging` (chat, 16 connections): the cost of logging fell from 7.1% to 6.1%
// of throughput (means over 12 and 15 pairs of processes, standard errors 0.3 and 0.4 points). An
// event is held only until its turn ends, well inside one scavenge, so nothing it holds is promoted.
//
// The serializer is usage-line.ts, not JSON.stringify: in the same hour, 4.3% and 4.4% against
// 5.6% and 5.5% (bench:logging, six pairs each); since it writes bytes into the arena, 4.1% and 3.4%
// against 6.0% and 5.2% for its string-building version.
import type { UsageEvent } from '../hooks.ts';
import type { BatchQueue, DropReason } from './batch-queue.ts';
import { LineArena } from './line-arena.ts';
import { UsageLineEncoder } from './usage-line.ts';

export interface LineLane {
  /** Takes the event; it is serialized at the end of this turn, so the caller must not change it after. */
  push(event: UsageEvent): void;
  /** Serializes what push() holds now (before a flush or a close). */
  encodePending(): void;
  readonly queue: BatchQueue<number>;
}

type MakeQueue = (write: (lengths: number[]) => Promise<void>, onDroppedItems: (lengths: number[], reason: DropReason) => void) => BatchQueue<number>;

/**
 * `onUnencodable` hears of an event that could not be serialized (it is left out): serialization runs at
 * setImmediate, outside the caller's try/catch, where a throw would end the process.
 */
export function createLineLane(writeLineBuffers: (buffers: Buffer[]) => Promise<void>, makeQueue: MakeQueue, onUnencodable: (err: unknown) => void): LineLane {
  const arena = new LineArena();
  const encoder = new UsageLineEncoder();
  let abandoned = false;
  const sum = (lengths: number[]) => lengths.reduce((a, b) => a + b, 0);

  const queue = makeQueue(
    async (lengths) => {
      const bytes = sum(lengths);
      await writeLineBuffers(arena.peek(bytes));
      if (!abandoned) arena.consume(bytes);
    },
    (lengths, reason) => {
      if (reason === 'queue_full' || reason === 'closed') {
        arena.unappend(lengths[0]!); // the line just appended, refused
      } else if (reason === 'close_deadline') {
        abandoned = true; // shutdown gave up on what is held
        arena.clear();
      } else if (!abandoned) {
        arena.consume(sum(lengths)); // the head batch, out of retries
      }
    },
  );

  let pending: UsageEvent[] = [];
  let scheduled = false;

  function encodePending(): void {
    scheduled = false;
    const events = pending;
    pending = [];
    for (const event of events) {
      let bytes: number;
      try {
        bytes = encoder.append(event, arena);
      } catch (err) {
        onUnencodable(err);
        continue;
      }
      queue.push(bytes);
    }
  }

  return {
    queue,
    encodePending,
    push(event) {
      pending.push(event);
      if (scheduled) return;
      scheduled = true;
      setImmediate(encodePending);
    },
  };
}
