// redactCredential on the bodies a careless or hostile upstream writes: the key in every spelling
// a JSON reader decodes, in member names, in JSON too deep to write again, and bodies left as
// they came when the key is not in them, and codings that are no decoder's name.
import t from 'tap';
import { REDACTED, redactCredential, redactCredentialText } from '../../core/pipeline/upstream-error.ts';

const KEY = 'sk-test/Key+0123456789';
const redact = (text: string) => redactCredential(Buffer.from(text), undefined, KEY);
const bodyOf = (text: string): string => {
  const out = redact(text);
  if ('unreadable' in out) throw new Error(out.unreadable);
  return out.body.toString('utf8');
};

t.test('every spelling a JSON reader decodes, in values and member names', async (t) => {
  const u = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const mixed = `sk-test\\/K\\u0065y+0123456789`;
  const out = bodyOf(`{"a":"${u}","b":["x ${mixed} y"],"${u}":1,"c":"${KEY.replaceAll('/', '\\/')}"}`);
  t.notOk(JSON.stringify(JSON.parse(out)).includes(KEY), out);
  t.same(JSON.parse(out), { a: REDACTED, b: [`x ${REDACTED} y`], [REDACTED]: 1, c: REDACTED });
});

t.test('a body without the key is passed as it came, escapes and all', async (t) => {
  const text = '{"error":{"message":"a \\"quoted\\" word \\u00e9","path":"a\\/b"}}';
  t.equal(bodyOf(text), text);
  t.equal(bodyOf('not json \\u0073'), 'not json \\u0073');
});

t.test('JSON too deep to write again: unreadable when it holds the key, as it came when not', async (t) => {
  const deep = (inner: string) => `${'['.repeat(100_000)}${inner}${']'.repeat(100_000)}`;
  const holding = redact(deep('"sk-\\u0074est/Key+0123456789"'));
  t.match(holding, { unreadable: /nested too deeply/ });
  const clean = deep('"a\\/b"');
  t.equal(bodyOf(clean), clean, 'read at any depth without overflowing the stack');
});

t.test('a coding named like an Object member ("constructor", "__proto__") is one Relay does not decode', async (t) => {
  for (const coding of ['constructor', '__proto__']) {
    const out = redactCredential(Buffer.from(`{"error":"${KEY}"}`), coding, KEY);
    t.same(out, { unreadable: `it is in content-encoding "${coding}", which Relay does not decode` }, coding);
  }
});

t.test('a host\'s header values are taken out beside the key, in every spelling a JSON reader decodes', async (t) => {
  const value = 'apim/subscription-0123456789';
  const u = [...value].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const out = redactCredential(Buffer.from(`{"a":"key ${KEY}","b":"${u}","c":"${value.replaceAll('/', '\\/')}","d":"${value}"}`), undefined, KEY, [value]);
  if ('unreadable' in out) throw new Error(out.unreadable);
  t.same(JSON.parse(out.body.toString('utf8')), { a: `key ${REDACTED}`, b: REDACTED, c: REDACTED, d: REDACTED });
  t.equal(redactCredentialText(`quota of ${value} spent`, '', [value]), `quota of ${REDACTED} spent`, 'a decoded message, without a host key (proxy mode)');
});
