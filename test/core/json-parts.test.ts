// stringifyToParts writes what JSON.stringify writes, byte for byte, as parts none of which needed
// a string over 64 K characters (json-parts.ts), whatever the value: what JSON.stringify leaves
// out, turns to null, or hands to toJSON, at every depth.
import t from 'tap';
import fc from 'fast-check';
import { stringifyToParts } from '../../core/http/json-parts.ts';
import { claudeCodeBody, codexBody } from '../bench/agent-bodies.ts';

/** The parts' text; null when their `length` is not their bytes. */
const joined = (value: unknown): string | null => {
  const bytes = stringifyToParts(value);
  const text = Buffer.concat(bytes.parts as Buffer[]).toString('utf8');
  return bytes.length === Buffer.byteLength(text) ? text : null;
};

t.test('the same text as JSON.stringify for arbitrary values (fixed seed)', async (t) => {
  const anything = fc.anything({
    maxDepth: 7, withBoxedValues: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true,
    withSparseArray: true, withTypedArray: true, withObjectString: true, withBigInt: false,
  });
  fc.assert(fc.property(anything, (value) => {
    const expected = JSON.stringify(value);
    if (expected === undefined) return true; // no JSON text: stringifyToParts throws (below)
    return joined(value) === expected;
  }), { seed: 20261125, numRuns: 2_000 });
  t.pass('2,000 values agree');
});

t.test('what JSON.stringify leaves out or turns to null, at every depth', async (t) => {
  const out = { u: undefined, f: () => 1, s: Symbol('x'), gone: { toJSON: () => undefined } };
  const value = {
    top: out,
    list: [undefined, () => 1, Symbol('y'), { toJSON: () => undefined }, out, [out, [out, [out, [out]]]]],
    deep: { a: { b: { c: { d: out } } } },
    date: new Date(0),
    custom: { toJSON: (key: string) => `custom ${key}` },
    boxed: [new Number(1), new String('s'), new Boolean(false)],
    numbers: [NaN, -0, Infinity, 1e21],
    text: ['\u2028', '\ud800', '\udc00\ud800', 'caf\u00e9 \ud83d\ude00', '"\\'],
    [Symbol('key')]: 'symbol keys are left out',
  };
  t.equal(joined(value), JSON.stringify(value));
  t.equal(joined([]), '[]');
  t.equal(joined({}), '{}');
  t.equal(joined('plain'), '"plain"');
  t.equal(joined(null), 'null');
  t.throws(() => stringifyToParts(undefined), TypeError, 'no JSON text: throws rather than send an empty body');
  t.throws(() => stringifyToParts({ a: [{ b: 1n }] }), TypeError, 'a BigInt throws as JSON.stringify throws');
  const circular: Record<string, unknown> = {};
  circular.self = { again: circular };
  t.throws(() => stringifyToParts(circular), TypeError, 'a cycle throws as JSON.stringify throws');
});

t.test('agent-sized requests: the same bytes in parts of at most ~64 K characters each', async (t) => {
  for (const raw of [codexBody(400_000), claudeCodeBody(400_000)]) {
    const value = JSON.parse(raw.toString('utf8'));
    const bytes = stringifyToParts(value);
    t.ok(Buffer.concat(bytes.parts as Buffer[]).equals(Buffer.from(JSON.stringify(value))), 'same bytes');
    t.ok(bytes.parts.length > 5, `${bytes.parts.length} parts`);
    t.ok(bytes.parts.every((part) => part.length < 2 * 32 * 1024 * 3), 'no part from a string over 64 K characters');
  }
  const big = { messages: [{ role: 'user', content: 'x'.repeat(200_000) }] };
  t.equal(joined(big), JSON.stringify(big), 'a value longer than a part is a part of its own');
});
