// Reading an inference body (readInferenceBody): model and stream from the bytes, as JSON.parse
// reads them, and a 400 naming what is wrong for anything else, a key Relay reads written twice
// included (it would be authorized as one value and served as another).
import t from 'tap';
import { mayHoldReasoningById, parseJsonBody, readInferenceBody } from '../../core/http/inference-body.ts';
import { claudeCodeBody, codexBody } from '../bench/agent-bodies.ts';

const read = (text: string) => readInferenceBody(Buffer.from(text));

t.test('model and stream read from the bytes, as JSON.parse reads them', async (t) => {
  for (const text of [
    '{"model":"gpt-4o","stream":true}',
    '{"model":"gpt-4o","stream":false}',
    '{"model":"gpt-4o","stream":null}',
    '{"model":"gpt-4o"}',
    '{ "stream" : true , "model" : "m" }',
    '{"model":"gpt\\u002d4o","stream":true}',
    '{"model":"caf\u00e9 \ud83d\ude00"}',
    '{"mod\\u0065l":"escaped key"}',
    '{"messages":[{"model":"nested","stream":"no"}],"model":"top"}',
  ]) {
    const body = read(text);
    const json = parseJsonBody(Buffer.from(text)) as { model: string; stream?: boolean };
    t.same({ model: body.model, stream: body.stream }, { model: json.model, stream: json.stream === true }, text);
    t.equal(JSON.parse(Buffer.from(text).toString('utf8', body.modelSpan.start, body.modelSpan.end)), json.model, `${text}: the model's span`);
  }
});

t.test('agent-sized bodies', async (t) => {
  for (const raw of [codexBody(200_000), claudeCodeBody(200_000)]) {
    const body = readInferenceBody(raw);
    t.equal(body.model, (JSON.parse(raw.toString()) as { model: string }).model);
    t.equal(body.stream, true);
  }
  // Codex's reasoning items carry encrypted_content: its turn's `input` (~400 KB) is not parsed for them.
  const codex = codexBody(400_000);
  t.equal((JSON.parse(codex.toString()) as { input: Array<{ type: string }> }).input.filter((i) => i.type === 'reasoning').length > 50, true, 'a Codex turn holds reasoning items');
  t.equal(mayHoldReasoningById(readInferenceBody(codex)), false, 'none named by id alone');
  const bare = Buffer.from(codex.toString().replace(/"encrypted_content":"[^"]*"/, '"summary_text":""'));
  t.equal(mayHoldReasoningById(readInferenceBody(bare)), true, 'one without its encrypted content is');
});

t.test('what is refused, with the code and the member named', async (t) => {
  for (const [text, code, field] of [
    ['', 'RELAY_ERR_INVALID_JSON', undefined],
    ['{', 'RELAY_ERR_INVALID_JSON', undefined],
    ['{"model":"m",}', 'RELAY_ERR_INVALID_JSON', undefined],
    ['{"model":"m","messages":[{"content":"a\u0001b"}]}', 'RELAY_ERR_INVALID_JSON', undefined],
    ['[{"model":"m"}]', 'RELAY_ERR_BAD_REQUEST', '/'],
    ['"m"', 'RELAY_ERR_BAD_REQUEST', '/'],
    ['{}', 'RELAY_ERR_BAD_REQUEST', '/model'],
    ['{"model":""}', 'RELAY_ERR_BAD_REQUEST', '/model'],
    ['{"model":5}', 'RELAY_ERR_BAD_REQUEST', '/model'],
    ['{"model":null}', 'RELAY_ERR_BAD_REQUEST', '/model'],
    ['{"model":"m","stream":"yes"}', 'RELAY_ERR_BAD_REQUEST', '/stream'],
    ['{"model":"m","stream":1}', 'RELAY_ERR_BAD_REQUEST', '/stream'],
    ['{"model":"m","stream":[true,false,null]}', 'RELAY_ERR_BAD_REQUEST', '/stream'],
    ['{"model":"o3-pro","messages":[],"model":"gpt-4.1-mini"}', 'RELAY_ERR_BAD_REQUEST', '/model'],
    ['{"model":"m","mod\\u0065l":"other"}', 'RELAY_ERR_BAD_REQUEST', '/model'],
    ['{"model":"m","stream":false,"stream":true}', 'RELAY_ERR_BAD_REQUEST', '/stream'],
    ['{"model":"m","stream_options":{},"stream_options":{"include_usage":true}}', 'RELAY_ERR_BAD_REQUEST', '/stream_options'],
  ] as const) {
    t.throws(() => read(text), field ? { code, field } : { code }, `${JSON.stringify(text)}: ${code}`);
  }
});
