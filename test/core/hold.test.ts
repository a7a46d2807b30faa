// Holding a stream's opening frames: the verdicts and the bounds in time and bytes.
import t from 'tap';
import { holdOpening, resume } from '../../core/pipeline/hold.ts';
import { PassThrough } from 'node:stream';

const b = (s: string) => Buffer.from(s);
/** 'o' marks an opening chunk, 'x' one with output, 'e' an in-stream error. */
const inspect = (chunk: Buffer): 'opening' | 'output' | 'error' => {
  const s = chunk.toString();
  return s.includes('e') ? 'error' : s.includes('x') ? 'output' : 'opening';
};
const bounds = { maxMs: 200, maxBytes: 1024, inspect };

/** An upstream body as undici gives one (a Readable), written to by the test. */
class Upstream implements AsyncIterator<Buffer> {
  private readonly stream = new PassThrough();
  private readonly iterator = this.stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  push(chunk: Buffer): void {
    this.stream.write(chunk);
  }
  end(): void {
    this.stream.end();
  }
  next(): Promise<IteratorResult<Buffer>> {
    return this.iterator.next();
  }
}

function upstream(): Upstream {
  return new Upstream();
}

t.test('a body already here: held up to the first output, the rest left to read', async (t) => {
  const body = upstream();
  body.push(b('o1 '));
  body.push(b('x2 '));
  const hold = await holdOpening(body, bounds);
  t.equal(hold.verdict, 'output');
  t.equal(Buffer.concat(hold.held).toString(), 'o1 x2 ');
  t.equal(hold.pending, null);
  body.push(b('x3'));
  body.end();
  const rest: string[] = [];
  for await (const chunk of resume(body, hold.pending)) rest.push(chunk.toString());
  t.same(rest, ['x3']);
});

t.test('chunks arriving over time: held until output or an error', async (t) => {
  const body = upstream();
  setTimeout(() => body.push(b('o1')), 10);
  setTimeout(() => body.push(b('o2')), 20);
  setTimeout(() => body.push(b('x3')), 30);
  const hold = await holdOpening(body, bounds);
  t.equal(hold.verdict, 'output');
  t.same(hold.held.map(String), ['o1', 'o2', 'x3']);

  const failing = upstream();
  setTimeout(() => failing.push(b('o1')), 10);
  setTimeout(() => failing.push(b('e2')), 20);
  t.equal((await holdOpening(failing, bounds)).verdict, 'error');
});

t.test('the time bound: opening frames and then silence end the hold, the pending read is kept', async (t) => {
  const body = upstream();
  setTimeout(() => body.push(b('o1')), 10);
  const started = Date.now();
  const hold = await holdOpening(body, bounds);
  const waited = Date.now() - started;
  t.equal(hold.verdict, 'bound');
  t.ok(waited >= 190 && waited < 1000, `ended at the bound (${waited} ms)`);
  t.same(hold.held.map(String), ['o1']);
  t.not(hold.pending, null, 'the read still waiting is handed on');
  body.push(b('x2'));
  body.end();
  const rest: string[] = [];
  for await (const chunk of resume(body, hold.pending)) rest.push(chunk.toString());
  t.same(rest, ['x2'], 'nothing is lost after the bound');
});

t.test('the byte bound and the end of the stream', async (t) => {
  const big = upstream();
  big.push(Buffer.alloc(2048, 'o'));
  t.equal((await holdOpening(big, bounds)).verdict, 'bound');

  const short = upstream();
  short.push(b('o1'));
  short.end();
  const hold = await holdOpening(short, bounds);
  t.equal(hold.verdict, 'ended');
  t.same(hold.held.map(String), ['o1']);
});

t.test('a first chunk the caller already read and found opening: held, and the hold reads on', async (t) => {
  const body = upstream();
  body.push(b('o2 '));
  body.push(b('x3'));
  const hold = await holdOpening(body, bounds, b('o1 '));
  t.equal(hold.verdict, 'output');
  t.equal(Buffer.concat(hold.held).toString(), 'o1 o2 x3');
  const big = await holdOpening(upstream(), bounds, Buffer.alloc(2048, 'o'));
  t.same([big.verdict, big.held.length, big.pending], ['bound', 1, null], 'a first chunk past maxBytes ends the hold at once');
});
