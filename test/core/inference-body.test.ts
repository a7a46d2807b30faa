// Reading an inference body in place (scanInferenceBody): model and stream from the bytes, the
// parsed body only when asked for, and null (the whole parse then says what is wrong) for anything
// the full check would refuse or read differently.
import t from 'tap';
import { BodyBytes } from '../../core/http/body-bytes.ts';
import { checkInferenceBody, parseJsonBody, scanInferenceBody } from '../../core/http/inference-body.ts';
import { claudeCodeBody, codexBody } from '../bench/agent-bodies.ts';

const scan = (text: string) => scanInferenceBody(BodyBytes.of(Buffer.from(text)));

t.test('model and stream read from the bytes, as the full check reads them', async (t) => {
  for (const text of [
    '{"model":"gpt-4o","stream":true}',
    '{"model":"gpt-4o","stream":false}',
    '{"model":"gpt-4o","stream":null}',
    '{"model":"gpt-4o"}',
    '{ "stream" : true , "model" : "m" }',
    '{"model":"gpt\\u002d4o","stream":true}',
    '{"model":"caf\u00e9 \ud83d\ude00"}',
    '{"model":"first","model":"last"}',
    '{"mod\\u0065l":"escaped key"}',
    '{"messages":[{"model":"nested","stream":"no"}],"model":"top"}',
  ]) {
    const scanned = scan(text);
    const full = checkInferenceBody(parseJsonBody(Buffer.from(text)));
    t.ok(scanned, text);
    t.same({ model: scanned?.model, stream: scanned?.stream, json: scanned?.json }, { model: full.model, stream: full.stream, json: full.json }, text);
  }
});

t.test('agent-sized bodies: read in place, parsed alike when asked', async (t) => {
  for (const raw of [codexBody(200_000), claudeCodeBody(200_000)]) {
    const scanned = scanInferenceBody(BodyBytes.of(raw))!;
    const full = checkInferenceBody(parseJsonBody(raw));
    t.equal(scanned.model, full.model);
    t.equal(scanned.stream, true);
    t.same(scanned.json, full.json);
    t.equal(scanned.json, scanned.json, 'parsed once, then kept');
  }
});

t.test('what the full check refuses (or must name) is left to it', async (t) => {
  for (const [text, code] of [
    ['', 'RELAY_ERR_INVALID_JSON'],
    ['{', 'RELAY_ERR_INVALID_JSON'],
    ['{"model":"m",}', 'RELAY_ERR_INVALID_JSON'],
    ['{"model":"m","messages":[{"content":"a\u0001b"}]}', 'RELAY_ERR_INVALID_JSON'],
    ['[{"model":"m"}]', 'RELAY_ERR_BAD_REQUEST'],
    ['"m"', 'RELAY_ERR_BAD_REQUEST'],
    ['{}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":""}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":5}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":null}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":"m","stream":"yes"}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":"m","stream":1}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":"m","stream":"true"}', 'RELAY_ERR_BAD_REQUEST'],
    ['{"model":"m","stream":[true,false,null]}', 'RELAY_ERR_BAD_REQUEST'],
  ] as const) {
    t.equal(scan(text), null, `${JSON.stringify(text)}: not read in place`);
    t.throws(() => checkInferenceBody(parseJsonBody(Buffer.from(text))), { code }, `${JSON.stringify(text)}: ${code}`);
  }
});

t.test('a released body lets go of its parsed JSON: reading it after throws, scanned or parsed', async (t) => {
  const text = '{"model":"m","stream":true,"input":"hello"}';
  const scanned = scan(text)!;
  t.equal(scanned.json.input, 'hello', 'parsed when asked');
  scanned.release();
  t.throws(() => scanned.json, /let go/, 'scanned: json throws once released');
  t.equal(scanned.model, 'm', 'model and stream stay');
  t.equal(scanned.stream, true);

  const unread = scan(text)!;
  unread.release();
  t.throws(() => unread.json, /let go/, 'released before it was ever parsed: throws too, instead of parsing');

  const full = checkInferenceBody(parseJsonBody(Buffer.from(text)));
  t.equal(full.json.input, 'hello');
  full.release();
  t.throws(() => full.json, /let go/, 'parsed by the full check: json throws once released');
  t.equal(full.model, 'm');
});
