// parseInPieces builds what JSON.parse(body.toString('utf8')) builds, from text made in pieces
// (json-pieces.ts): tested with pieces as small as a few bytes, so that every container is built
// by the walk, over arbitrary JSON written compact and indented, and over agent-sized bodies.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { parseInPieces } from '../../core/http/json-pieces.ts';
import { claudeCodeBody, codexBody } from '../bench/agent-bodies.ts';

/** Equal as JSON.parse's result: same members in the same order, at every depth, own `__proto__` included. */
function sameAsParse(t: Test, body: Buffer, pieceBytes: number, label: string): void {
  const expected = JSON.parse(body.toString('utf8'));
  const actual = parseInPieces(body, pieceBytes);
  t.equal(JSON.stringify(actual), JSON.stringify(expected), `${label}: same text`);
  t.same(actual, expected, `${label}: same value`, { diagnostic: false });
}

const json = fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' }); // any code point, lone surrogates included
const pieceSizes = [1, 2, 8, 33, 1000];

t.test('arbitrary JSON, compact and indented, every piece size (fixed seed)', async (t) => {
  fc.assert(fc.property(json, fc.constantFrom(...pieceSizes), fc.constantFrom(0, 2, '\t'), (value, pieceBytes, indent) => {
    const body = Buffer.from(JSON.stringify(value, null, indent) ?? 'null');
    const actual = parseInPieces(body, pieceBytes);
    return JSON.stringify(actual) === JSON.stringify(JSON.parse(body.toString('utf8')));
  }), { seed: 20261125, numRuns: 3_000 });
  t.pass('3,000 bodies agree');
});

t.test('what plain assignment would get wrong: __proto__, duplicates, key order, escapes, non-ASCII', async (t) => {
  const bodies = [
    '{"__proto__":{"polluted":true},"a":1}',
    '{"a":1,"b":2,"a":3}',
    '{"b":1,"2":"two","a":3,"1":"one","-1":0}',
    '{"k\\"ey\\\\":"v\\"al\\\\ue\\\\","\\u0041":"\\ud83d\\ude00","caf\u00e9":"\u2028"}',
    ' \r\n\t{ "a" : [ 1 , -2.5e-3 , true , false , null , { } , [ ] ] , "b" : "\\\\\\"" } \n',
    '[{"deep":[[[[{"x":"' + 'y'.repeat(100) + '"}]]]]},"' + '\\\\'.repeat(40) + '"]',
    '"a top-level string"',
    '12345',
  ];
  for (const text of bodies) {
    for (const size of pieceSizes) sameAsParse(t, Buffer.from(text), size, `${JSON.stringify(text).slice(0, 40)} / ${size}`);
  }
  const proto = parseInPieces(Buffer.from('{"__proto__":{"polluted":true},"x":' + '"' + 'z'.repeat(50) + '"}'), 4) as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(proto), Object.prototype, 'the prototype is not set');
  t.ok(Object.hasOwn(proto, '__proto__'), '__proto__ is an own member, as JSON.parse makes it');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing polluted');
});

t.test('agent-sized bodies with the real piece size', async (t) => {
  for (const raw of [codexBody(400_000), claudeCodeBody(400_000)]) sameAsParse(t, raw, 60 * 1024, `${Math.round(raw.length / 1024)} KB`);
  const bigString = Buffer.from(JSON.stringify({ model: 'm', input: [{ type: 'function_call_output', output: 'x\u00e9'.repeat(100_000) }] }));
  sameAsParse(t, bigString, 60 * 1024, 'a value bigger than a piece');
});
