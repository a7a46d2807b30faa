// topLevelMember: one member of a JSON body without parsing the rest; it must agree with
// JSON.parse whenever it answers, and answer for the bodies vendors send.
import t from 'tap';
import fc from 'fast-check';
import { topLevelMember } from '../../core/http/json-top-level.ts';

const buf = (v: unknown, indent?: number) => Buffer.from(JSON.stringify(v, null, indent));
const usage = { prompt_tokens: 8, total_tokens: 8, prompt_tokens_details: { cached_tokens: 0 } };

t.test('vendor answers: the usage member is read, compact or pretty-printed', async (t) => {
  const embeddings = {
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding: Array.from({ length: 1536 }, (_, i) => Math.sin(i)) }],
    model: 'text-embedding-3-small',
    usage,
  };
  const chat = { id: 'c', object: 'chat.completion', choices: [{ message: { content: 'the "usage": {} of it' } }], usage, service_tier: 'default' };
  const messages = { id: 'm', type: 'message', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 3, output_tokens: 1, service_tier: 'standard' } };
  for (const [name, body] of Object.entries({ embeddings, chat, messages })) {
    t.same(topLevelMember(buf(body), 'usage'), { value: body.usage }, name);
    t.same(topLevelMember(buf(body, 2), 'usage'), { value: body.usage }, `${name}, pretty-printed`);
  }
  t.same(topLevelMember(buf({ id: 'x', usage: null }), 'usage'), { value: null }, 'null usage');
});

t.test('cases it leaves to JSON.parse', async (t) => {
  const cases: Record<string, string> = {
    'no such member': '{"id":"x"}',
    'only a nested member of that name': '{"id":"x","metadata":{"usage":{"a":1}}}',
    'a nested one after the top-level one': '{"usage":{"a":1},"metadata":{"usage":{"b":2}}}',
    'inside an array': '[{"usage":{"a":1}}]',
    'a value that is neither an object nor null': '{"usage":5}',
    'the name written with an escape': '{"\\u0075sage":{"a":1}}',
    'space before the colon': '{"usage" :{"a":1}}',
    'cut short': '{"usage":{"a":1',
  };
  for (const [name, text] of Object.entries(cases)) t.equal(topLevelMember(Buffer.from(text), 'usage'), undefined, name);
});

t.test('whenever it answers, it agrees with JSON.parse (random bodies, fixed seed)', async (t) => {
  // Keys drawn often as `usage`, strings often holding quotes, backslashes and the key's text.
  const key = fc.oneof(fc.constant('usage'), fc.constant('u'), fc.string({ maxLength: 4 }));
  const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('"usage":{', '\\', '\\"', '"}', '{[', 'usage'));
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), tie('object'), tie('array')),
    object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
    array: fc.array(tie('value'), { maxLength: 3 }),
  }));
  let answered = 0;
  let answeredFromTail = 0;
  fc.assert(fc.property(fc.dictionary(key, value, { maxKeys: 5 }), fc.boolean(), fc.nat(), (body, pretty, cut) => {
    const bytes = buf(body, pretty ? 2 : undefined);
    const want = JSON.stringify((JSON.parse(bytes.toString()) as Record<string, unknown>).usage);
    const got = topLevelMember(bytes, 'usage');
    if (got !== undefined) {
      answered++;
      if (JSON.stringify(got.value) !== want) return false;
    }
    // The same from a tail cut anywhere (as passthrough keeps of a long answer).
    const fromTail = topLevelMember(bytes.subarray(cut % (bytes.length + 1)), 'usage', { isTail: true });
    if (fromTail === undefined) return true;
    answeredFromTail++;
    return JSON.stringify(fromTail.value) === want;
  }), { seed: 20261121, numRuns: 3000 });
  t.ok(answered > 300, `answered for ${answered} of 3000 bodies`);
  t.ok(answeredFromTail > 100, `answered from a tail for ${answeredFromTail} of 3000 bodies`);
});

t.test('in a tail, a quote whose backslashes may start before the tail is not trusted', async (t) => {
  // The key `a"usage` is written `"a\"usage":`: its last bytes are the needle, after a backslash.
  const body = Buffer.from(JSON.stringify({ 'a"usage': { x: 1 } }));
  const needle = body.indexOf('"usage":');
  t.equal(body[needle - 1], 0x5c, 'the needle follows a backslash');
  t.equal(topLevelMember(body, 'usage'), undefined, 'whole: escaped, refused');
  t.equal(topLevelMember(body.subarray(needle - 1), 'usage', { isTail: true }), undefined, 'a tail from the backslash: escaped, refused');
  t.equal(topLevelMember(body.subarray(needle), 'usage', { isTail: true }), undefined, 'a tail from the quote: cannot tell, refused');
  t.same(topLevelMember(body.subarray(needle), 'usage'), { value: { x: 1 } }, 'what the same bytes would give if they were the whole body');
});
