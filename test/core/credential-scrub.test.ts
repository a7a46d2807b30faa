// CredentialScrubber: the key is masked wherever the pieces of an answer split it, the masked
// answer keeps its length, pieces without the key pass as they came, and placeholder keys are
// left alone. HostKeyMask does the same to whole texts Relay keeps (JSON as JSON.stringify writes it).
import t from 'tap';
import { CredentialScrubber, HostKeyMask, HostSecrets } from '../../core/pipeline/credential-scrub.ts';

const KEY = 'sk-proj-Abc/def+0123456789xyz';
const ESCAPED = KEY.replaceAll('/', '\\/');
const MASK = '[redacted host key]'.padEnd(KEY.length, '*');
const MASK_ESCAPED = '[redacted host key]'.padEnd(ESCAPED.length, '*');
const TEXT = `data: {"error":{"message":"key ${KEY} refused","again":"${ESCAPED}"}}\n\ndata: sk-proj tail ${KEY}`;
const WANTED = `data: {"error":{"message":"key ${MASK} refused","again":"${MASK_ESCAPED}"}}\n\ndata: sk-proj tail ${MASK}`;

function run(pieces: Buffer[]): string {
  const scrubber = CredentialScrubber.of(KEY)!;
  const out = pieces.map((p) => scrubber.push(p));
  out.push(scrubber.end());
  return Buffer.concat(out).toString('utf8');
}

t.test('every split of the answer in two and three pieces gives the same masked answer', async (t) => {
  const bytes = Buffer.from(TEXT);
  let wrong = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (run([bytes.subarray(0, i), bytes.subarray(i)]) !== WANTED) wrong++;
    for (let j = i; j <= bytes.length; j += 7) {
      if (run([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]) !== WANTED) wrong++;
    }
  }
  t.equal(wrong, 0, 'no split lets the key through or loses a byte');
  t.equal(Buffer.byteLength(WANTED), bytes.length, 'the masked answer is as long as the original');
});

t.test('a piece without the key goes on as it came; the start of a key waits for the next piece', async (t) => {
  const scrubber = CredentialScrubber.of(KEY)!;
  const plain = Buffer.from('data: {"text":"hello"}\n\n');
  t.equal(scrubber.push(plain), plain, 'the same Buffer');
  t.equal(scrubber.push(Buffer.from('x sk-pr')).toString(), 'x ', 'sk-pr could begin the key');
  t.equal(scrubber.push(Buffer.from('oj is not it\n')).toString(), 'sk-proj is not it\n', 'and was not');
  t.equal(scrubber.push(Buffer.from('ends in sk')).toString(), 'ends in ');
  t.equal(scrubber.end().toString(), 'sk', 'what was held goes out at the end');
});

t.test('placeholder keys and documents are not scrubbed from answers', async (t) => {
  t.equal(CredentialScrubber.of('EMPTY'), null);
  t.equal(CredentialScrubber.of('ollama'), null);
  t.equal(CredentialScrubber.of('{"type": "service_account", "private_key": "..."}'), null);
  t.equal(CredentialScrubber.of(null), null);
  t.not(CredentialScrubber.of(KEY), null);
});

t.test('HostKeyMask: the key out of stored JSON and ids, with the masks the caller\'s copy gets', async (t) => {
  const mask = HostKeyMask.of(KEY)!;
  // A string that holds the key "\\/"-escaped (as the upstream's JSON had it) is written with its backslash escaped.
  const stored = JSON.stringify({ text: `key ${KEY}`, again: ESCAPED, [KEY]: 1 });
  const masked = mask.json(stored);
  t.same(JSON.parse(masked), { text: `key ${MASK}`, again: MASK_ESCAPED, [MASK]: 1 }, 'in strings and member names, in both spellings');
  t.equal(mask.text(`resp_${KEY}`), `resp_${MASK}`, 'an id');
  const plain = JSON.stringify({ text: 'hello' });
  t.equal(mask.json(plain), plain, 'a text without the key is the same');
  t.equal(HostKeyMask.of(KEY), mask, 'made once per key');
  t.equal(HostKeyMask.of('ollama'), null, 'a placeholder key: nothing to mask');
  t.equal(HostKeyMask.of(null), null);
});

t.test('a host\'s header values: their long words masked beside the key, in every split; short ones and placeholders left', async (t) => {
  const token = 'gw-token/0123456789abcdef';
  const secrets = HostSecrets.of([`Bearer ${token}`, '2024-06-01', 'EMPTY'])!;
  t.same(secrets.values, [token], 'the token of "Bearer <token>"; a version and a placeholder are no secret');
  t.equal(HostSecrets.of(['2024-06-01', 'team core']), null, 'nothing worth masking: no pattern, no cost');
  const text = `{"error":"gateway ${token} and key ${KEY}","again":"${token.replaceAll('/', '\\/')}"}`;
  const bytes = Buffer.from(text);
  const outputs = new Set<string>();
  for (let i = 0; i <= bytes.length; i++) {
    const scrubber = CredentialScrubber.of(KEY, secrets)!;
    outputs.add(Buffer.concat([scrubber.push(bytes.subarray(0, i)), scrubber.push(bytes.subarray(i)), scrubber.end()]).toString('utf8'));
  }
  t.equal(outputs.size, 1, 'every split gives the same answer');
  const [out] = outputs;
  t.notOk(out!.includes('0123456789abcdef'), 'neither spelling of the token is left');
  t.notOk(out!.includes(KEY), 'nor the key');
  t.equal(Buffer.byteLength(out!), bytes.length, 'the masked answer is as long as the original');
  const proxy = CredentialScrubber.of(null, secrets)!;
  t.notOk(Buffer.concat([proxy.push(Buffer.from(`x ${token} y`)), proxy.end()]).toString().includes(token), 'without a host key (proxy mode) too');
  t.equal(HostKeyMask.of(null, secrets)!.json(JSON.stringify({ quoted: token })), JSON.stringify({ quoted: '[redacted host key]'.padEnd(token.length, '*') }), 'and out of what Relay keeps');
});

t.test('credentials a call sent (UpstreamResponse.sentCredentials) join the host\'s secrets', async (t) => {
  const gateway = 'gw-key-0123456789abcdef';
  const host = HostSecrets.of([gateway])!;
  // An Entra ID token is a JWT past the 1 KB a host key may be: still masked.
  const jwt = `eyJ0eXAiOiJKV1QifQ.${'A'.repeat(2000)}.sig0123456789`;
  const joined = HostSecrets.withSent(host, [jwt, 'short'])!;
  t.same([...joined.values].sort(), [gateway, jwt].sort(), 'the host\'s values and the long token; a placeholder-length one left out');
  t.equal(HostSecrets.withSent(host, [jwt, 'short']), joined, 'made once per set');
  t.equal(HostSecrets.withSent(host, undefined), host, 'nothing sent: the host\'s own');
  t.equal(HostSecrets.withSent(null, []), null);
  const scrubber = CredentialScrubber.of(null, HostSecrets.withSent(null, [jwt]))!;
  const answer = Buffer.from(`{"error":"token ${jwt} expired"}`);
  const out = Buffer.concat([scrubber.push(answer.subarray(0, 900)), scrubber.push(answer.subarray(900)), scrubber.end()]).toString();
  t.equal(out.length, answer.length, 'the length kept');
  t.notOk(out.includes(jwt.slice(0, 40)), 'the token masked though split between pieces');
});
