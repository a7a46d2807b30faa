// Line readers over JSONL segments, within a byte budget per query so a read stays bounded.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { RelayError } from '../../core/plugin-api.ts';

/** Bytes a single query may read; past it the query is refused rather than answered partly. */
export class ScanBudget {
  private used = 0;

  constructor(private readonly maxBytes: number) {}

  consume(bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxBytes) {
      throw new RelayError('RELAY_ERR_QUERY_UNSUPPORTED',
        `the file usage backend would read more than ${this.maxBytes} bytes for this query (maxScanBytes); narrow the window with since, from or to, or use a database backend`);
    }
  }
}

const CHUNK = 64 * 1024;

/** Calls `onLine` for each line from the end of the file to its start, until it returns false. */
export async function readLinesBackward(file: string, budget: ScanBudget, onLine: (line: string) => boolean): Promise<void> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // removed by retention
    throw err;
  }
  try {
    let position = (await handle.stat()).size;
    let rest: Buffer = Buffer.alloc(0);
    while (position > 0) {
      const length = Math.min(CHUNK, position);
      position -= length;
      budget.consume(length);
      const chunk = Buffer.allocUnsafe(length);
      await handle.read(chunk, 0, length, position);
      const buf = rest.length > 0 ? Buffer.concat([chunk, rest]) : chunk;
      let end = buf.length;
      while (end > 0) {
        const newline = buf.lastIndexOf(0x0a, end - 1);
        if (newline < 0) break;
        if (newline + 1 < end && !onLine(buf.toString('utf8', newline + 1, end))) return;
        end = newline;
      }
      rest = Buffer.from(buf.subarray(0, end));
    }
    if (rest.length > 0) onLine(rest.toString('utf8'));
  } finally {
    await handle.close();
  }
}

/** Calls `onLine` for each line from the start of the file. */
export async function readLinesForward(file: string, size: number, budget: ScanBudget, onLine: (line: string) => void): Promise<void> {
  budget.consume(size);
  const stream = createReadStream(file, { encoding: 'utf8', end: Math.max(0, size - 1) });
  const done = new Promise<void>((resolve, reject) => {
    stream.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? resolve() : reject(err)));
    stream.once('close', resolve);
  });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  for await (const line of lines) if (line.length > 0) onLine(line);
  await done;
}
