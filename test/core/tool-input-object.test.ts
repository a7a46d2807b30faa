// toolInputObject: a call's canonical arguments text as the object that Messages, Converse and
// Gemini take as tool input. Nothing the model produced may be lost on the way.
import t from 'tap';
import { toolInputObject } from '../../core/plugin-api/canonical.ts';

t.test('a JSON object is taken as it is; empty arguments are an empty object', async (t) => {
  t.same(toolInputObject('{"path":"a.txt","n":[1,2]}', 'function'), { path: 'a.txt', n: [1, 2] });
  t.same(toolInputObject('', 'function'), {});
  t.same(toolInputObject('{"x":1}', undefined), { x: 1 });
});

t.test('what is not a JSON object is wrapped, never dropped', async (t) => {
  t.same(toolInputObject('[1,2]', 'function'), { input: '[1,2]' });
  t.same(toolInputObject('null', 'function'), { input: 'null' });
  t.same(toolInputObject('"text"', 'function'), { input: '"text"' });
  t.same(toolInputObject('{"cut', 'function'), { input: '{"cut' });
});

t.test("a custom tool's raw text is wrapped even when it reads as JSON", async (t) => {
  t.same(toolInputObject('*** Begin Patch\n*** End Patch', 'custom'), { input: '*** Begin Patch\n*** End Patch' });
  t.same(toolInputObject('{"a":1}', 'custom'), { input: '{"a":1}' });
  t.same(toolInputObject('', 'custom'), { input: '' });
});
