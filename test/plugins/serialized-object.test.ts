// SerializedObject must give exactly JSON.stringify({ ...base, ...changes }): the Responses
// stream's frames are compared byte for byte by clients' SDK parsers and by our own tests.
import t from 'tap';
import fc from 'fast-check';
import { SerializedObject } from '../../plugins/wire-vendor-a/codec/serialized-object.ts';

t.test('keeps key order: changed keys in place, new keys appended in the order given', async (t) => {
  const base = { id: 'r1', status: 'in_progress', error: null, output: [], tools: [{ name: 'f' }], metadata: {} };
  const changes = { status: 'completed', completed_at: 5, output: [{ a: 1 }], usage: { n: 1 } };
  const serialized = new SerializedObject(base);
  t.equal(serialized.with(changes), JSON.stringify({ ...base, ...changes }));
  t.equal(serialized.with(), JSON.stringify(base));
  t.equal(serialized.with({ status: 'failed' }), JSON.stringify({ ...base, status: 'failed' }), 'reusable: each call starts from the base');
});

t.test('undefined values are left out, and a key undefined in the base keeps its place when set', async (t) => {
  const base = { a: 1, b: undefined, c: 'x' };
  const serialized = new SerializedObject(base);
  t.equal(serialized.with(), '{"a":1,"c":"x"}');
  t.equal(serialized.with({ b: 2 }), JSON.stringify({ ...base, b: 2 }));
  t.equal(serialized.with({ c: undefined, d: undefined }), JSON.stringify({ ...base, c: undefined, d: undefined }));
});

t.test('matches JSON.stringify of the spread for arbitrary objects (fixed seed)', async (t) => {
  const key = fc.constantFrom('id', 'status', 'output', 'tools', 'x"y', 'a\\b', '1', '0');
  const value = fc.oneof(fc.jsonValue(), fc.constant(undefined));
  const object = fc.dictionary(key, value);
  fc.assert(fc.property(object, object, (base, changes) => new SerializedObject(base).with(changes) === JSON.stringify({ ...base, ...changes })), { seed: 20261121, numRuns: 500 });
  t.pass('500 pairs of objects agree');
});
