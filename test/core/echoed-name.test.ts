// echoedName: a caller's name as an error message repeats it (core/echoed-name.ts).
import t from 'tap';
import { echoedName, MAX_ECHOED_NAME } from '../../core/echoed-name.ts';

t.test('a name up to the bound is echoed as it is', async (t) => {
  t.equal(echoedName(''), '');
  t.equal(echoedName('gpt-4o'), 'gpt-4o');
  t.equal(echoedName('a'.repeat(MAX_ECHOED_NAME)), 'a'.repeat(MAX_ECHOED_NAME));
});

t.test('a longer one is its first 200 characters and its length', async (t) => {
  t.equal(echoedName('a'.repeat(MAX_ECHOED_NAME + 1)), `${'a'.repeat(MAX_ECHOED_NAME)}… (201 characters)`);
});

t.test('a surrogate pair across the cut is left out whole', async (t) => {
  const name = `${'a'.repeat(MAX_ECHOED_NAME - 1)}😀${'b'.repeat(10)}`;
  const echoed = echoedName(name);
  t.equal(echoed, `${'a'.repeat(MAX_ECHOED_NAME - 1)}… (${name.length} characters)`);
  t.notMatch(echoed, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no lone surrogate');
});
