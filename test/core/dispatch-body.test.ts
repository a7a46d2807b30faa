// DispatchBody: the upstream body fed by undici's dispatch callbacks, read with for-await.
import t from 'tap';
import { DispatchBody } from '../../core/http/dispatch-body.ts';

const b = (s: string) => Buffer.from(s);
const tick = () => new Promise((resolve) => setImmediate(resolve));

function body(): { body: DispatchBody; resumed: () => number; aborted: Error[] } {
  let resumes = 0;
  const aborted: Error[] = [];
  const d = new DispatchBody(() => { resumes++; }, (err) => { aborted.push(err); });
  return { body: d, resumed: () => resumes, aborted };
}

t.test('chunks that arrive in one go (one socket read) reach a waiting reader as one Buffer', async (t) => {
  const { body: d } = body();
  const first = d.next();
  d.push(b('data: 1\n\n'));
  d.push(b('data: 2\n\n'));
  d.push(b('data: 3\n\n'));
  const got = await first;
  t.equal(got.done, false);
  t.equal(got.value!.toString(), 'data: 1\n\ndata: 2\n\ndata: 3\n\n');
});

t.test('chunks that arrive at different times are read separately, in order', async (t) => {
  const { body: d } = body();
  const reads: string[] = [];
  const reader = (async () => { for await (const chunk of d) reads.push(chunk.toString()); })();
  d.push(b('a'));
  await tick();
  d.push(b('b'));
  await tick();
  d.push(b('c'));
  d.end();
  await reader;
  t.same(reads, ['a', 'b', 'c']);
});

t.test('chunks queued before the reader asks are read together', async (t) => {
  const { body: d } = body();
  d.push(b('x'));
  d.push(b('y'));
  const got = await d.next();
  t.equal(got.value!.toString(), 'xy');
});

t.test('the end in the same read as the last chunks: the chunks come first, then done', async (t) => {
  const { body: d } = body();
  const first = d.next();
  d.push(b('last '));
  d.push(b('frames'));
  d.end();
  t.equal((await first).value!.toString(), 'last frames');
  t.equal((await d.next()).done, true);
});

t.test('a failure in the same read as the last chunks: the chunks come first, then the error', async (t) => {
  const { body: d } = body();
  const first = d.next();
  d.push(b('partial'));
  d.fail(new Error('socket reset'));
  t.equal((await first).value!.toString(), 'partial');
  await t.rejects(d.next(), /socket reset/);
});

t.test('a reader left waiting when the queue is thrown away after the end is told done', async (t) => {
  const { body: d } = body();
  const first = d.next();
  d.push(b('unwanted'));
  d.end();
  d.destroy();
  t.equal((await first).done, true);
});

t.test('past the high-water mark the upstream is paused until the reader takes the queue', async (t) => {
  const { body: d, resumed } = body();
  const big = Buffer.alloc(200 * 1024);
  t.equal(d.push(big), true);
  t.equal(d.push(big), false, 'pause the socket');
  t.equal(resumed(), 0);
  const got = await d.next();
  t.equal(got.value!.length, 400 * 1024, 'both chunks in one read');
  t.equal(resumed(), 1, 'the socket is resumed once the queue is taken');
});

t.test('resume() discards the rest; destroy() before the end aborts the request', async (t) => {
  const discard = body();
  discard.body.resume();
  t.equal(discard.body.push(Buffer.alloc(1024 * 1024)), true, 'discarded bytes never pause the socket');
  discard.body.end();
  t.equal((await discard.body.next()).done, true);

  const cut = body();
  cut.body.push(b('x'));
  cut.body.destroy();
  t.equal(cut.aborted.length, 1);
});

t.test('readNow: what is queued, as one Buffer, without a promise; null when nothing is', async (t) => {
  const { body: d, resumed } = body();
  t.equal(d.readNow(), null, 'nothing yet');
  d.push(b('a'));
  d.push(b('b'));
  t.equal(d.readNow()!.toString(), 'ab');
  t.equal(d.readNow(), null, 'taken');
  // Past the high-water mark the upstream was paused: taking the queue lets it go on.
  t.notOk(d.push(Buffer.alloc(300 * 1024)));
  t.equal(d.readNow()!.length, 300 * 1024);
  t.equal(resumed(), 1, 'resumed once the queue was taken');
  d.push(b('c'));
  d.end();
  const rest: string[] = [];
  for await (const chunk of d) rest.push(chunk.toString());
  t.same(rest, ['c'], 'the iterator goes on from there');
});
