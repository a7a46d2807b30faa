// The Responses stream's shortcuts must give exactly the text of the plain serialization they
// replace: SerializedObject that of JSON.stringify({ ...base, ...changes }), DeltaFrame that of
// sseFrame(type, JSON.stringify({ type, ...fields, delta, ...after, sequence_number })).
import t from 'tap';
import fc from 'fast-check';
import { sseFrame } from '../../core/plugin-api.ts';
import { SerializedObject } from '../../plugins/wire-vendor-a/codec/serialized-object.ts';
import { DeltaFrame } from '../../plugins/wire-vendor-a/codec/delta-frame.ts';

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

t.test('DeltaFrame renders what emit() would, for any delta text (fixed seed)', async (t) => {
  const fields = { item_id: 'msg_1', output_index: 2, content_index: 0 };
  const withLogprobs = new DeltaFrame('response.output_text.delta', fields, { logprobs: [] });
  const plain = new DeltaFrame('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 1 });
  const bare = new DeltaFrame('x.delta', {});
  const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', '"', '\\', '\n', '\u2028', '</script>'));
  fc.assert(fc.property(text, fc.nat(), (delta, sequence) =>
    withLogprobs.render(delta, sequence) === sseFrame('response.output_text.delta', JSON.stringify({ type: 'response.output_text.delta', ...fields, delta, logprobs: [], sequence_number: sequence }))
    && plain.render(delta, sequence) === sseFrame('response.function_call_arguments.delta', JSON.stringify({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta, sequence_number: sequence }))
    && bare.render(delta, sequence) === sseFrame('x.delta', JSON.stringify({ type: 'x.delta', delta, sequence_number: sequence }))), { seed: 20261121, numRuns: 500 });
  t.pass('500 deltas agree');
});
