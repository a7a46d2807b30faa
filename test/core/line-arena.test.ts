// LineArena against a plain list of lines: appends (short, multi-byte, larger than a chunk),
// take-backs of the last line, and batches peeked and consumed from the head, in random order.
import t from 'tap';
import fc from 'fast-check';
import { LineArena } from '../../core/observer/line-arena.ts';

/** Appends `line` and a newline as an encoder does (reserve, write, commit); returns its bytes. */
function append(arena: LineArena, line: string): number {
  const buf = arena.reserve(line.length * 3 + 1);
  const end = arena.end + buf.write(line, arena.end, 'utf8');
  buf[end] = 0x0a;
  return arena.commit(end + 1);
}

const line = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 400_000 }).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom('🚀'.repeat(200_000), 'é'.repeat(600_000)) },
);
const op = fc.oneof(
  { weight: 6, arbitrary: line.map((l) => ({ kind: 'append' as const, line: l })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'unappend' as const }) },
  { weight: 3, arbitrary: fc.nat({ max: 5 }).map((n) => ({ kind: 'take' as const, lines: n })) },
);

t.test('holds exactly the lines appended and not yet consumed, in order (random operations, fixed seed)', async (t) => {
  fc.assert(fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
    const arena = new LineArena();
    const model: Array<{ text: string; bytes: number }> = [];
    for (const o of ops) {
      if (o.kind === 'append') {
        const bytes = append(arena, o.line);
        if (bytes !== Buffer.byteLength(`${o.line}\n`)) return false;
        model.push({ text: `${o.line}\n`, bytes });
      } else if (o.kind === 'unappend') {
        const last = model.pop();
        if (last) arena.unappend(last.bytes);
      } else {
        const batch = model.splice(0, o.lines);
        const bytes = batch.reduce((n, l) => n + l.bytes, 0);
        const got = Buffer.concat(arena.peek(bytes)).toString('utf8');
        if (got !== batch.map((l) => l.text).join('')) return false;
        arena.consume(bytes);
      }
      if (arena.size !== model.reduce((n, l) => n + l.bytes, 0)) return false;
    }
    return Buffer.concat(arena.peek(arena.size)).toString('utf8') === model.map((l) => l.text).join('');
  }), { seed: 20261121, numRuns: 400 });
  t.pass('400 sequences agree');
});

t.test('peek and consume past what is held, a take-back past the head, or a commit outside the room, throw', async (t) => {
  const arena = new LineArena();
  const bytes = append(arena, 'one');
  t.throws(() => arena.peek(bytes + 1), /past the tail/);
  arena.consume(bytes);
  t.throws(() => arena.consume(1), /past the tail/);
  t.throws(() => arena.unappend(bytes), /past the head/);
  t.equal(arena.size, 0);
  append(arena, 'two');
  const buf = arena.reserve(10);
  t.throws(() => arena.commit(arena.end - 1), /outside the reserved room/, 'a line cannot end before it starts');
  t.throws(() => arena.commit(buf.length + 1), /outside the reserved room/, 'nor past its chunk');
  arena.clear();
  t.equal(arena.size, 0, 'cleared');
  t.same(arena.peek(0), []);
});
