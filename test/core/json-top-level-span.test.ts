// topLevelValueSpan / replaceTopLevelValue (core/http/json-top-level.ts): where a top-level
// member's value lies in a request body's bytes, so passthrough can rename the model and keep
// every other byte. It must find the member JSON.parse reads, and refuse (undefined) whenever it
// cannot be sure: missing, written twice, or a malformed top level.
import t from 'tap';
import fc from 'fast-check';
import { replaceTopLevelValue, topLevelValueSpan } from '../../core/http/json-top-level.ts';

const valueAt = (text: string) => {
  const body = Buffer.from(text);
  const span = topLevelValueSpan(body, 'model');
  return span && body.toString('utf8', span.start, span.end);
};

t.test('the top-level value, whatever surrounds it', async (t) => {
  const cases: Record<string, [string, string]> = {
    compact: ['{"model":"a","stream":true}', '"a"'],
    'model last': ['{"stream":true,"n":1,"x":null,"y":-1.5e3,"z":false,"model":"a"}', '"a"'],
    whitespace: ['\r\n {\n\t"messages" : [ ] ,\n  "model"\t:  "a"  \n}\n ', '"a"'],
    'escapes in its value': ['{"model":"a\\"b\\\\\\u00e9</script>"}', '"a\\"b\\\\\\u00e9</script>"'],
    'escapes in other strings': ['{"m":"\\"model\\":\\"no\\"\\\\","model":"a","n":"\\\\"}', '"a"'],
    'a nested model before': ['{"messages":[{"model":"inner","content":{"model":1}}],"model":"a"}', '"a"'],
    'a nested model after': ['{"model":"a","metadata":{"model":"inner","deeper":[{"model":"x"}]}}', '"a"'],
    'brackets inside strings': ['{"s":"}]{[","model":"a","t":"{\\"model\\":\\"b\\"}"}', '"a"'],
    'the name written with an escape': ['{"mod\\u0065l":"a"}', '"a"'],
    'a value that is not a string': ['{"model":{"name":"a"}}', '{"name":"a"}'],
    'non-ASCII around': ['{"é":"日本","model":"a","z":"🌍"}', '"a"'],
  };
  for (const [name, [text, want]] of Object.entries(cases)) t.equal(valueAt(text), want, name);
});

t.test('cases it refuses', async (t) => {
  const cases: Record<string, string> = {
    'no such member': '{"messages":[]}',
    'an empty object': '{ }',
    'only a nested member of that name': '{"metadata":{"model":"a"}}',
    'written twice': '{"model":"a","stream":true,"model":"b"}',
    'written twice, once with an escape': '{"model":"a","mod\\u0065l":"b"}',
    'a top-level array': '[{"model":"a"}]',
    'cut short': '{"model":"a","messages":[{"role":"user"}',
    'an unterminated string': '{"model":"a","x":"abc}',
    'a missing comma': '{"x":1 "model":"a"}',
    'a missing value': '{"model":,"x":1}',
    'bytes after the object': '{"model":"a"} x',
    'two objects': '{"model":"a"}{"model":"b"}',
    'a broken escape in a name': '{"\\u00zz":1,"model":"a"}',
    empty: '',
  };
  for (const [name, text] of Object.entries(cases)) t.equal(topLevelValueSpan(Buffer.from(text), 'model'), undefined, name);
});

t.test('replaceTopLevelValue keeps every other byte', async (t) => {
  const text = '{ "messages":[{"role":"user","content":"caf\\u00e9 </script>","model":"inner"}],\n  "model" :  "alias",\t"stream":false }';
  const out = replaceTopLevelValue(Buffer.from(text), 'model', JSON.stringify('real-model'));
  t.equal(out?.toString(), text.replace('"alias"', '"real-model"'));
  t.equal(replaceTopLevelValue(Buffer.from('{"messages":[]}'), 'model', '"x"'), undefined, 'no model: nothing to replace');
});

t.test('on random bodies it answers exactly when the member is there, and the splice parses as intended', async (t) => {
  // Keys drawn often as `model`, strings often holding quotes, backslashes, brackets and the key.
  const key = fc.oneof(fc.constant('model'), fc.constant('m'), fc.string({ maxLength: 4 }));
  const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('"model":"', '\\', '\\"', '"}', '{[', ']}', 'model', 'é</script>'));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), tie('object'), tie('array')),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    array: fc.array(tie('value'), { maxLength: 3 }),
  }));
  let answered = 0;
  fc.assert(fc.property(fc.dictionary(key, value, { maxKeys: 5 }), fc.constantFrom(undefined, 2, '\t'), (body, indent) => {
    const bytes = Buffer.from(JSON.stringify(body, null, indent));
    const out = replaceTopLevelValue(bytes, 'model', '"renamed"');
    if (!Object.hasOwn(body, 'model')) return out === undefined;
    if (out === undefined) return false;
    answered++;
    return JSON.stringify(JSON.parse(out.toString())) === JSON.stringify({ ...body, model: 'renamed' });
  }), { seed: 20261122, numRuns: 3000 });
  t.ok(answered > 500, `answered for ${answered} of 3000 bodies`);
});
