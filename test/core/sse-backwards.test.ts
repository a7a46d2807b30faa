// Reading SSE frames from a stream's end (sse-backwards.ts, through StreamTail) against the forward
// parser on the same bytes: the whole stream backwards is the forward frames reversed, and a tail
// that let the stream's start go yields a suffix of them, never a frame the forward parser lacks.
import t from 'tap';
import fc from 'fast-check';
import { SseParser } from '../../core/http/sse.ts';
import { BackwardsFrameReader, FOUND, STREAM_START } from '../../core/http/sse-backwards.ts';
import { StreamTail } from '../../core/pipeline/stream-tail.ts';

interface Frame { event: string | undefined; data: string }

function forward(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  const parser = new SseParser((event, data) => frames.push({ event, data }));
  parser.feed(bytes);
  parser.end();
  return frames;
}

/** Every frame the tail yields, newest first (the visitor never says it is done). */
function backwards(tail: StreamTail): Frame[] {
  const frames: Frame[] = [];
  tail.visitBackwards((event, data) => {
    frames.push({ event, data });
    return false;
  });
  return frames;
}

function tailOf(chunks: Buffer[], keepBytes?: number): StreamTail {
  const tail = new StreamTail(keepBytes);
  for (const chunk of chunks) tail.add(chunk);
  return tail;
}

function cut(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

t.test('line ends, comments, multi-line data, fields, a BOM and an unterminated last frame', async (t) => {
  const cases: string[] = [
    'data: a\r\n\r\ndata: b\r\r',
    'event: e\rdata: one\rdata: two\r\r',
    'data\n\n',
    '\n\n\ndata: after blank lines\n\n\n\n',
    'event: lost\n\ndata: x\n\n',
    'id: 7\nretry: 10\nunknown: y\nevent:\ndata: z\n\n',
    '\ufeffdata: after-bom\n\ndata: second\n\n',
    'data: ok\n\n\ufeffdata: a BOM inside the stream is no BOM\n\n',
    'data: x\n\ndata: unterminated',
    'data: a\n\r\ndata: b\r\n\ndata: c\n\rdata: d\n\n',
    ': only a comment\n\nevent: ping\ndata: {}\n\n: trailing comment\n\n',
  ];
  for (const text of cases) {
    const bytes = Buffer.from(text);
    const want = forward(bytes).reverse();
    t.same(backwards(tailOf([bytes])), want, JSON.stringify(text));
    t.same(backwards(tailOf(cut(bytes, 1))), want, `${JSON.stringify(text)}, one byte a chunk`);
  }
});

t.test('agrees with the forward parser on random streams and random chunk sizes (fixed seed)', async (t) => {
  const value = fc.stringMatching(/^[ -~é✓🙂:]{0,12}$/);
  const line = fc.oneof(
    value.map((v) => `data: ${v}`),
    value.map((v) => `data:${v}`),
    fc.constantFrom('event: a', 'event:b', 'event:', 'data', 'id: 1', ': comment', 'foo: bar', ''),
  );
  const ending = fc.constantFrom('\n', '\r\n', '\r');
  const stream = fc.array(fc.tuple(line, ending).map(([l, e]) => l + e), { maxLength: 40 });
  fc.assert(fc.property(stream, fc.integer({ min: 1, max: 64 }), fc.boolean(), (lines, size, bom) => {
    const bytes = Buffer.from((bom ? '\ufeff' : '') + lines.join(''));
    return JSON.stringify(backwards(tailOf(cut(bytes, size)))) === JSON.stringify(forward(bytes).reverse());
  }), { seed: 20261121, numRuns: 2000 });
  t.pass('2000 streams agree');
});

t.test('a tail that let the start go yields the newest frames the forward parser saw, in order', async (t) => {
  const value = fc.stringMatching(/^[ -~é🙂]{0,40}$/);
  const frame = fc.tuple(fc.constantFrom('', 'event: a\n', 'event: b\r\n'), value, fc.constantFrom('\n\n', '\r\n\r\n', '\r\r'))
    .map(([event, data, end]) => `${event}data: ${data}${end}`);
  let sawDrop = 0;
  fc.assert(fc.property(fc.array(frame, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 16, max: 400 }), (frames, size, keep) => {
    const bytes = Buffer.from(frames.join(''));
    const want = forward(bytes).reverse();
    const got = backwards(tailOf(cut(bytes, size), keep));
    if (got.length < want.length) sawDrop++;
    return JSON.stringify(got) === JSON.stringify(want.slice(0, got.length));
  }), { seed: 20261123, numRuns: 1500 });
  t.ok(sawDrop > 100, `the tail let the start go in ${sawDrop} of the runs`);
});

t.test('keeps about keepBytes of whole chunks, and always the last one', async (t) => {
  const tail = tailOf(cut(Buffer.from(Array.from({ length: 1000 }, (_, i) => `data: ${i}\n\n`).join('')), 100), 1000);
  const frames = backwards(tail);
  t.equal(frames[0]!.data, '999', 'the newest frame first');
  t.ok(frames.length >= 1000 / 11 - 10 && frames.length <= 1100 / 10, `a thousand bytes or so of frames (${frames.length})`);
  const big = Buffer.from(`data: ${'x'.repeat(5000)}\n\n`);
  t.same(backwards(tailOf([Buffer.from('data: old\n\n'), big], 1000)).map((f) => f.data.length), [5000], 'a chunk past the bound is kept whole; the one before goes');
});

t.test('the look reaches past its first 8 KB only when the frames there did not do', async (t) => {
  const filler = Array.from({ length: 2000 }, (_, i) => `data: {"i":${i}}\n\n`).join('');
  const bytes = Buffer.from(`data: {"usage":1}\n\n${filler}data: [DONE]\n\n`);
  const chunks = cut(bytes, 300);
  let visited = 0;
  const found = tailOf(chunks).visitBackwards((_event, data) => {
    visited++;
    return data.includes('usage');
  });
  t.ok(found, 'the usage frame, 30 KB back, is found');
  t.ok(visited > 2000, `every frame after it was read on the way (${visited} visits)`);
  visited = 0;
  t.ok(tailOf(chunks).visitBackwards((_event, data) => ++visited > 0 && data === '[DONE]'), 'the last frame is found');
  t.equal(visited, 1, 'at once');
});

t.test('BackwardsFrameReader.read: what came before decides whether the first bytes start a frame', async (t) => {
  const seen: string[] = [];
  const reader = new BackwardsFrameReader((_event, data) => {
    seen.push(data);
    return data === 'stop';
  });
  const text = 'data: first\n\ndata: whole\n\n';
  const cases: Array<[string, Buffer | typeof STREAM_START, string[], number]> = [
    ['the stream start', STREAM_START, ['whole', 'first'], 0],
    ['a frame boundary', Buffer.from('x\n\n'), ['whole', 'first'], 0],
    ['a CRLF CRLF boundary split across the edge', Buffer.from('x\r\n\r'), ['whole', 'first'], 0],
    ['the middle of a line', Buffer.from('"a":'), ['whole'], 13],
    ['one line end: a line of the same frame', Buffer.from('x\n'), ['whole'], 13],
    ['CR LF: one line end', Buffer.from('x\r\n'), ['whole'], 13],
    ['only line ends, too few to tell', Buffer.from('\n'), ['whole'], 13],
  ];
  for (const [name, before, want, unread] of cases) {
    seen.length = 0;
    t.equal(reader.read(Buffer.from(text), before), unread, `${name}: ${unread} bytes left unread`);
    t.same(seen, want, `${name}: frames read`);
  }
  // A leading line end in the bytes, completing a boundary the edge began.
  seen.length = 0;
  t.equal(reader.read(Buffer.from('\ndata: a\n\n'), Buffer.from('x\r\n')), 0);
  t.same(seen, ['a']);
  seen.length = 0;
  t.equal(reader.read(Buffer.from('data: x\n\ndata: stop\n\ndata: y\n\n'), STREAM_START), FOUND, 'FOUND once the visitor says so');
  t.same(seen, ['y', 'stop']);
});
