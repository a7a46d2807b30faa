// The kernel's byte-level SSE parser against eventsource-parser (a text-level implementation of
// the same spec section, the one Relay used before) on the same bytes, split anywhere.
import t from 'tap';
import fc from 'fast-check';
import { createParser } from 'eventsource-parser';
import { SseParser } from '../../core/http/sse.ts';

interface Frame { event: string | undefined; data: string }

function ours(chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  const parser = new SseParser((event, data) => frames.push({ event, data }));
  for (const chunk of chunks) parser.feed(chunk);
  parser.end();
  return frames;
}

function reference(chunks: Buffer[]): Frame[] {
  const frames: Frame[] = [];
  const parser = createParser({ onEvent: (e) => frames.push({ event: e.event, data: e.data }) });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  parser.feed(`${decoder.decode()}\n\n`);
  return frames;
}

function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

t.test('frames as vendors write them, in every split of one or two cuts', async (t) => {
  const text = 'event: message_start\ndata: {"type":"message_start","text":"héllo ✓ 🙂"}\n\n'
    + 'data: {"a":1}\n\n: keep-alive comment\n\nevent: ping\ndata: {}\n\ndata: [DONE]\n\n';
  const bytes = Buffer.from(text);
  const whole = ours([bytes]);
  t.same(whole.map((f) => f.event), ['message_start', undefined, 'ping', undefined]);
  t.equal(whole[0]!.data, '{"type":"message_start","text":"héllo ✓ 🙂"}');
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j += 7) {
      const got = ours(splitAt(bytes, [i, j]));
      if (JSON.stringify(got) !== JSON.stringify(whole)) t.fail(`split at ${i} and ${j}`, { got, want: whole });
    }
  }
  t.pass('every split gives the same frames');
});

t.test('CR, LF and CRLF line ends, a CR at a chunk end, multi-line data, fields without colon', async (t) => {
  const cases: Array<[string, Frame[]]> = [
    ['data: a\r\n\r\ndata: b\r\r', [{ event: undefined, data: 'a' }, { event: undefined, data: 'b' }]],
    ['event: e\rdata: one\rdata: two\r\r', [{ event: 'e', data: 'one\ntwo' }]],
    ['data\n\n', [{ event: undefined, data: '' }]],
    ['data:no-space\ndata:  two-spaces\n\n', [{ event: undefined, data: 'no-space\n two-spaces' }]],
    ['event: lost\n\ndata: x\n\n', [{ event: undefined, data: 'x' }]],
    ['id: 7\nretry: 10\nunknown: y\nevent:\ndata: z\n\n', [{ event: undefined, data: 'z' }]],
    ['\ufeffdata: after-bom\n\n', [{ event: undefined, data: 'after-bom' }]],
    ['data: unterminated', [{ event: undefined, data: 'unterminated' }]],
  ];
  for (const [text, want] of cases) {
    const bytes = Buffer.from(text);
    t.same(ours([bytes]), want, JSON.stringify(text));
    t.same(reference([bytes]), want, `reference agrees: ${JSON.stringify(text)}`);
    for (let i = 0; i <= bytes.length; i++) t.same(ours(splitAt(bytes, [i])), want, `${JSON.stringify(text)} split at ${i}`);
  }
});

t.test('agrees with eventsource-parser on random streams and random splits (fixed seed)', async (t) => {
  const value = fc.stringMatching(/^[ -~éü✓🙂:]{0,12}$/);
  const line = fc.oneof(
    value.map((v) => `data: ${v}`),
    value.map((v) => `data:${v}`),
    fc.constantFrom('event: a', 'event:b', 'event:', 'data', 'id: 1', 'retry: 5', ': comment', 'foo: bar', ''),
  );
  const ending = fc.constantFrom('\n', '\r\n', '\r');
  const stream = fc.array(fc.tuple(line, ending).map(([l, e]) => l + e), { maxLength: 30 });
  fc.assert(fc.property(stream, fc.array(fc.nat(), { maxLength: 6 }), (lines, cuts) => {
    const bytes = Buffer.from(lines.join(''));
    const chunks = splitAt(bytes, cuts);
    return JSON.stringify(ours(chunks)) === JSON.stringify(reference(chunks));
  }), { seed: 20261121, numRuns: 2000 });
  t.pass('2000 streams agree');
});

t.test('event names: many distinct ones, bytes that are not UTF-8, never tied to a chunk', async (t) => {
  // Many distinct names, twice over: each frame gets its own name.
  const names = Array.from({ length: 150 }, (_, i) => `name-${i}-${'é'.repeat(i % 3)}`);
  const text = [...names, ...names].map((n, i) => `event: ${n}\ndata: ${i}\n\n`).join('');
  t.same(ours([Buffer.from(text)]).map((f) => f.event), [...names, ...names]);
  // Same length, different bytes: never confused.
  t.same(ours([Buffer.from('event: abcd\ndata: 1\n\nevent: abce\ndata: 2\n\nevent: abcd\ndata: 3\n\n')]).map((f) => f.event), ['abcd', 'abce', 'abcd']);
  // Bytes that are not UTF-8 decode as replacement characters, every time alike.
  const bad = Buffer.concat([Buffer.from('event: x'), Buffer.from([0xff, 0xfe]), Buffer.from('\ndata: 1\n\n')]);
  t.same(ours([bad, bad]).map((f) => f.event), ['x\ufffd\ufffd', 'x\ufffd\ufffd']);
  // A chunk may be reused once its frames are delivered: a name is not a view of it.
  const chunk = Buffer.from('event: reused-name\ndata: 1\n\n');
  t.same(ours([chunk]).map((f) => f.event), ['reused-name']);
  chunk.fill(0x7a, 7, 18); // "event: zzzzzzzzzzz\n..."
  t.same(ours([Buffer.from('event: reused-name\ndata: 2\n\n'), chunk]).map((f) => f.event), ['reused-name', 'zzzzzzzzzzz']);
});

t.test('a line longer than its chunks is read whole, and strings are accepted', async (t) => {
  const long = 'x'.repeat(100_000);
  const bytes = Buffer.from(`data: ${long}\n\n`);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 1000) chunks.push(bytes.subarray(i, i + 1000));
  t.same(ours(chunks), [{ event: undefined, data: long }]);
  const frames: Frame[] = [];
  const parser = new SseParser((event, data) => frames.push({ event, data }));
  parser.feed('event: s\ndata: from a string\n\n');
  t.same(frames, [{ event: 's', data: 'from a string' }]);
});

/** Frames and oversize reports from `chunks` under a `max`-byte frame bound. */
function bounded(chunks: Buffer[], max: number): { frames: Frame[]; oversized: number; held: number } {
  const frames: Frame[] = [];
  let oversized = 0;
  let held = 0;
  const parser = new SseParser((event, data) => frames.push({ event, data }), { maxFrameBytes: max, onOversize: () => oversized++ });
  for (const chunk of chunks) {
    parser.feed(chunk);
    // What the parser holds between feeds: the unfinished line and the frame's data so far.
    const inside = parser as unknown as { partial: Buffer[]; data: string; dataBuf: Buffer | null; dataStart: number; dataEnd: number };
    const undecoded = inside.dataBuf ? inside.dataEnd - inside.dataStart : 0;
    held = Math.max(held, inside.partial.reduce((n, b) => n + b.length, 0) + inside.data.length + undecoded);
  }
  parser.end();
  return { frames, oversized, held };
}

t.test('a frame past maxFrameBytes is skipped up to its blank line; the frames around it arrive', async (t) => {
  const big = 'y'.repeat(5_000);
  const cases: Array<[string, string]> = [
    ['one long line', `data: ${big}\n\n`],
    ['many data lines', Array.from({ length: 100 }, () => 'data: ' + 'z'.repeat(50)).join('\n') + '\n\n'],
    ['a long line then more lines', `event: e\ndata: ${big}\ndata: tail\nid: 4\n\n`],
    ['with CRLF ends', `data: ${big}\r\ndata: more\r\n\r\n`],
  ];
  for (const [name, oversized] of cases) {
    const bytes = Buffer.from(`data: before\n\n${oversized}event: after\ndata: after\n\n`);
    const want = [{ event: undefined, data: 'before' }, { event: 'after', data: 'after' }];
    for (const size of [1, 7, 64, 1000, bytes.length]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const got = bounded(chunks, 1000);
      t.same(got.frames, want, `${name}, ${size}-byte chunks: the frames before and after arrive`);
      t.equal(got.oversized, 1, `${name}, ${size}-byte chunks: reported once`);
      t.ok(got.held <= 1000 + size, `${name}, ${size}-byte chunks: held ${got.held} bytes at most`);
    }
  }
});

t.test('frames up to maxFrameBytes pass; an oversized last frame without its blank line is dropped at end()', async (t) => {
  const exact = 'a'.repeat(994); // "data: " + 994 = 1000 bytes
  t.same(bounded([Buffer.from(`data: ${exact}\n\n`)], 1000), { frames: [{ event: undefined, data: exact }], oversized: 0, held: 0 });
  const over = bounded([Buffer.from(`data: ${exact}x\n\n`)], 1000);
  t.same([over.frames, over.oversized], [[], 1]);
  const unterminated = bounded([Buffer.from('data: ok\n\n'), Buffer.from(`data: ${'b'.repeat(3000)}`)], 1000);
  t.same([unterminated.frames, unterminated.oversized], [[{ event: undefined, data: 'ok' }], 1]);
  // Two oversized frames in a row are two reports; the stream goes on after them.
  const two = bounded([Buffer.from(`data: ${'c'.repeat(2000)}\n\ndata: ${'d'.repeat(2000)}\n\ndata: end\n\n`)], 1000);
  t.same([two.frames, two.oversized], [[{ event: undefined, data: 'end' }], 2]);
});
