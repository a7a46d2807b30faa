// How the bench's idle CPUs wait: by default it asks the kernel (PM QoS, /dev/cpu_dma_latency = 0)
// to keep idle CPUs polling instead of halting, for as long as the file stays open, as cyclictest
// and tuned's latency-performance profile do for latency measurements. On this machine (a
// Firecracker VM, cpuidle driver haltpoll, guest_halt_poll_ns=0) a halted vCPU costs a VM exit to
// wake, and a request through a gateway crosses between the two cores four times: at one
// connection the bare Node proxy added +0.25 ms over direct halting and +0.05 ms polling, so
// most of that figure was the hypervisor's, not the gateway's. BENCH_IDLE=halt measures with the
// machine's default instead; test/bench/RESULTS.md reports both (bd4cc12).
import { closeSync, openSync, writeSync } from 'node:fs';

export type IdleMode = 'poll' | 'halt';

export interface IdleHold {
  /** What the run's idle CPUs actually did. */
  mode: IdleMode;
  /** Why polling was asked for and not obtained, when it was not. */
  note?: string;
  release(): void;
}

const QOS_DEVICE = '/dev/cpu_dma_latency';

/** Keeps idle CPUs polling until `release()` when `wanted` is 'poll' and the kernel allows it. */
export function holdIdleMode(wanted: IdleMode): IdleHold {
  if (wanted === 'halt') return { mode: 'halt', release() {} };
  let fd: number;
  try {
    fd = openSync(QOS_DEVICE, 'w');
    const zeroMicroseconds = Buffer.alloc(4);
    zeroMicroseconds.writeInt32LE(0);
    writeSync(fd, zeroMicroseconds);
  } catch (err) {
    const note = `${QOS_DEVICE} could not be set (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); idle CPUs halt`;
    return { mode: 'halt', note, release() {} };
  }
  let open = true;
  return {
    mode: 'poll',
    release() {
      if (!open) return;
      open = false;
      closeSync(fd); // the kernel drops the request with the last close
    },
  };
}

export function idleModeFromEnv(value: string | undefined): IdleMode {
  if (value === undefined || value === '' || value === 'poll') return 'poll';
  if (value === 'halt') return 'halt';
  throw new Error(`BENCH_IDLE must be "poll" or "halt", not ${JSON.stringify(value)}`);
}

export function describeIdleMode(hold: IdleHold): string {
  return hold.mode === 'poll'
    ? 'idle CPUs poll (PM QoS cpu_dma_latency=0)'
    : `idle CPUs halt (the machine's default)${hold.note ? `: ${hold.note}` : ''}`;
}
