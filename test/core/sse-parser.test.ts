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
