// Streams with a clock on both ends, to show that a translated stream reaches the client chunk
// by chunk: the upstream writes frames `everyMs` apart and reports when it wrote the last one;
// the client side keeps each read with its arrival time.
import type { ServerResponse } from 'node:http';
import type { RawAction } from './fake-upstream.ts';

export interface TimedStream {
  action: RawAction;
  /** performance.now() when the upstream ended its body. */
  finishedAt: Promise<number>;
}

export function timedStream(frames: string[], everyMs: number): TimedStream {
  let report!: (at: number) => void;
  const finishedAt = new Promise<number>((resolve) => { report = resolve; });
  const action: RawAction = {
    kind: 'raw',
    handle(_req, res: ServerResponse) {
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      res.on('close', () => clearTimeout(timer));
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.flushHeaders();
      const next = () => {
        if (res.destroyed) return;
        if (sent === frames.length) {
          res.end(() => report(performance.now()));
          return;
        }
        res.write(frames[sent++]);
        timer = setTimeout(next, everyMs);
      };
      next();
    },
  };
  return { action, finishedAt };
}

export interface TimedRead {
  at: number;
  text: string;
}

/** Reads a fetch Response's body to its end, keeping each read with performance.now(). */
export async function readTimed(res: Response): Promise<TimedRead[]> {
  const reads: TimedRead[] = [];
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    reads.push({ at: performance.now(), text: decoder.decode(value, { stream: true }) });
  }
  return reads;
}
