// holdsEscapedLetter: which \u escapes could spell a member name a byte search looks for.
import t from 'tap';
import { holdsEscapedLetter } from '../../core/canonical/escaped-letters.ts';

t.test('an escaped letter or underscore is found; other escapes are not', async (t) => {
  t.ok(holdsEscapedLetter(Buffer.from('{"\\u0063ontainer":"x"}')), 'c');
  t.ok(holdsEscapedLetter(Buffer.from('{"type":"item\\u005Freference"}')), '_ in upper-case hex');
  t.ok(holdsEscapedLetter(Buffer.from('{"a":"\\u00e9","\\u0074ype":1}')), 'after an escape that is not one');
  t.notOk(holdsEscapedLetter(Buffer.from('{"text":"caf\\u00e9 \\u4e2d \\u003cb\\u003e \\u0026 \\n \\"q\\""}')), 'accents, CJK, Go\'s HTML escapes, \\n, \\"');
  t.notOk(holdsEscapedLetter(Buffer.from('{"text":"ends with \\u00')), 'a cut escape');
  t.notOk(holdsEscapedLetter(Buffer.from('{"text":"u0063 and u00e9"}')), 'u00 without its backslash');
  t.ok(holdsEscapedLetter(Buffer.from('\\u0063')), 'at the very start');
});
