// Files a passed-through Messages answer's code wrote: Anthropic lists them in the code execution
// result (`bash_code_execution_output.file_id`) and keeps them in its Files API under the key that
// ran the code, so a file made for relay key A is readable, as a document, image or
// container_upload, by every key behind the same host key. Relay records the file as A's and
// refuses another key's request naming it with a 404 in Anthropic's error shape.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startRelay, seedRoute, type TestRelay } from '../../core/testing.ts';
import { anthropic, parseSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay, type Answer } from '../support/relay-client.ts';
import { keyOfSamePolicy, ownerOf } from '../support/owned-ids.ts';

type Json = Record<string, any>;

const CODE_EXECUTION = { type: 'code_execution_20250825', name: 'code_execution' };

/** A request with the code execution tool is answered with code that wrote a new file. */
function writesFiles(up: FakeUpstream): void {
  up.script((req) => {
    const tools: Json[] = Array.isArray(req.json?.tools) ? req.json.tools : [];
    if (req.pathname !== '/v1/messages' || !tools.some((x) => String(x?.type).startsWith('code_execution_'))) return undefined;
    const o = {
      model: String(req.json.model), text: 'I wrote answer.txt.',
      containerId: `container_011${randomBytes(16).toString('base64url')}`, fileId: `file_011${randomBytes(16).toString('base64url')}`,
    };
    return req.json.stream === true ? { frames: anthropic.codeExecutionEvents(o) } : { body: anthropic.codeExecutionMessage(o) };
  });
}

async function setup(t: { teardown(fn: () => Promise<void>): void }): Promise<{ relay: TestRelay; up: FakeUpstream; a: string; b: string; model: string }> {
  const relay = await startRelay();
  const up = await startFakeUpstream({ text: 'read it' });
  t.teardown(async () => {
    await relay.close();
    await up.close();
  });
  writesFiles(up);
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-files', upstreamModel: 'claude-sonnet-4-5', policy: { modelIds: '*' } });
  const b = await keyOfSamePolicy(relay, seeded);
  return { relay, up, a: seeded.relayKey, b, model: 'claude-files' };
}

const send = (relay: TestRelay, key: string, body: unknown): Promise<Answer> => viaRelay(relay, '/vendor-b/v1/messages', key, body, { 'anthropic-version': '2023-06-01' });
const asking = (model: string, content: unknown[], extra: Json = {}) => ({ model, max_tokens: 256, messages: [{ role: 'user', content }], ...extra });
const question = { type: 'text', text: 'What does it say?' };

/** The file the answer's code wrote, from the JSON or the stream's content_block_start. */
function fileOf(answer: Answer): string {
  const blocks: Json[] = answer.text.startsWith('event:')
    ? parseSse(answer.text).map((f) => JSON.parse(f.data) as Json).filter((e) => e.type === 'content_block_start').map((e) => e.content_block)
    : (JSON.parse(answer.text) as Json).content;
  return blocks.find((b) => b.type === 'bash_code_execution_tool_result')!.content.content[0].file_id;
}

t.test('a file A\'s code wrote is A\'s: another key cannot name it, A can', async (t) => {
  const { relay, up, a, b, model } = await setup(t);

  for (const stream of [false, true]) {
    t.test(stream ? 'written in a streamed answer' : 'written in a JSON answer', async (t) => {
      const made = await send(relay, a, asking(model, [{ type: 'text', text: 'Write 6 * 7 to answer.txt.' }], { tools: [CODE_EXECUTION], ...(stream ? { stream: true } : {}) }));
      t.equal(made.status, 200);
      const file = fileOf(made);
      t.match(file, /^file_011/);
      t.match(await ownerOf(relay, file), /^key:/, 'the file is recorded as A\'s');

      const before = up.requests.length;
      const document = await send(relay, b, asking(model, [{ type: 'document', source: { type: 'file', file_id: file } }, question]));
      t.equal(document.status, 404);
      t.same(JSON.parse(document.text), { type: 'error', error: { type: 'not_found_error', message: `File with id '${file}' not found.` } });
      const image = await send(relay, b, asking(model, [{ type: 'image', source: { type: 'file', file_id: file } }, question]));
      t.equal(image.status, 404, 'an image source');
      const upload = await send(relay, b, asking(model, [{ type: 'container_upload', file_id: file }, question], { tools: [CODE_EXECUTION] }));
      t.equal(upload.status, 404, 'a container_upload');
      const nested = await send(relay, b, {
        model, max_tokens: 64, messages: [
          { role: 'user', content: 'Read my file.' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01x', name: 'fetch_file', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01x', content: [{ type: 'document', source: { type: 'file', file_id: file } }] }] },
        ],
        tools: [{ name: 'fetch_file', input_schema: { type: 'object', properties: {} } }],
      });
      t.equal(nested.status, 404, 'a document inside a tool result');
      const escaped = await send(relay, b, `{"model":"${model}","max_tokens":64,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file\\u005fid":"${file}"}}]}]}`);
      t.equal(escaped.status, 404, 'a member name spelled with an escape');
      const streamed = await send(relay, b, asking(model, [{ type: 'document', source: { type: 'file', file_id: file } }, question], { stream: true }));
      t.equal(streamed.status, 404, 'a streamed request');
      t.equal(up.requests.length, before, 'nothing reached the upstream');

      const own = await send(relay, a, asking(model, [{ type: 'document', source: { type: 'file', file_id: file } }, question]));
      t.equal(own.status, 200, 'A reads its own file');
      t.equal(up.lastRequest()!.json.messages[0].content[0].source.file_id, file, 'forwarded as sent');
    });
  }

  t.test('counting tokens is checked too: Anthropic would count another owner\'s file', async (t) => {
    const made = await send(relay, a, asking(model, [{ type: 'text', text: 'Write a report.' }], { tools: [CODE_EXECUTION] }));
    const file = fileOf(made);
    await ownerOf(relay, file);
    const count = (key: string) => viaRelay(relay, '/vendor-b/v1/messages/count_tokens', key, { model, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: file } }] }] }, { 'anthropic-version': '2023-06-01' });
    const before = up.requests.length;
    const counted = await count(b);
    t.equal(counted.status, 404);
    t.same(JSON.parse(counted.text), { type: 'error', error: { type: 'not_found_error', message: `File with id '${file}' not found.` } });
    t.equal(up.requests.length, before, 'nothing reached the upstream');
    const own = await count(a);
    t.equal(own.status, 200, 'the owner counts its own');
    t.equal(up.lastRequest()!.pathname, '/v1/messages/count_tokens');
  });

  t.test('a file Relay never recorded (the operator\'s upload) is forwarded; a request naming none costs no query', async (t) => {
    const uploaded = await send(relay, b, asking(model, [{ type: 'document', source: { type: 'file', file_id: 'file_011uploaded_by_the_operator' } }, question]));
    t.equal(uploaded.status, 200);

    await relay.relay.db.query('ALTER TABLE responses_forwarded_owners RENAME TO owners_away');
    t.teardown(async () => { await relay.relay.db.query('ALTER TABLE owners_away RENAME TO responses_forwarded_owners'); });
    const before = up.requests.length;
    const down = await send(relay, b, asking(model, [{ type: 'container_upload', file_id: 'file_011any' }, question]));
    t.equal(down.status, 503, 'the database does not answer: refused, not forwarded unchecked');
    t.equal(up.requests.length, before);
    const plain = await send(relay, b, asking(model, [{ type: 'text', text: 'A file_id is a string, said in prose: not a reference.' }]));
    t.equal(plain.status, 200, 'no file named: no query, served while the table is gone');
  });
});

t.test('a key written twice in a message is refused: an upstream keeping the first value would read a file the check did not see', async (t) => {
  const { relay, up, a, b, model } = await setup(t);
  const made = await send(relay, a, asking(model, [{ type: 'text', text: 'Write a secret to answer.txt.' }], { tools: [CODE_EXECUTION] }));
  t.equal(made.status, 200);
  const file = fileOf(made);
  t.match(await ownerOf(relay, file), /^key:/, 'the file is recorded as A\'s');
  const body = (...blocks: string[]) => `{"model":"${model}","max_tokens":64,"messages":[{"role":"user","content":[${blocks.join(',')}]}]}`;
  const text = '{"type":"text","text":"What does it say?"}';

  const before = up.requests.length;
  for (const [sent, message, why] of [
    [body(`{"type":"document","source":{"type":"file","file_id":"${file}"},"source":{"type":"text","media_type":"text/plain","data":"hi"}}`, text),
      "'source' appears more than once in the object at /messages/0/content/0", 'a document whose last source names no file'],
    [body(text, `{"type":"container_upload","file_id":"${file}","file_id":"file_011B_s_own"}`),
      "'file_id' appears more than once in the object at /messages/0/content/1", 'file_id twice'],
    [body(`{"type":"image","source":{"type":"file","file_id":"${file}","fil\\u0065_id":"file_011B_s_own"}}`),
      "'file_id' appears more than once in the object at /messages/0/content/0/source", 'the second spelled with an escape'],
    [`{"model":"${model}","max_tokens":64,"messages":[{"role":"user","content":[{"type":"container_upload","file_id":"${file}"}]}],"messages":[{"role":"user","content":"hi"}]}`,
      "'messages' appears more than once in the request body", '`messages` twice at the top'],
  ] as const) {
    const refused = await send(relay, b, sent);
    t.equal(refused.status, 400, why);
    t.same(JSON.parse(refused.text), { type: 'error', error: { type: 'invalid_request_error', message } }, `${why}: the key and the object named`);
  }
  t.equal(up.requests.length, before, 'nothing reached the upstream');

  const own = await send(relay, a, body(`{"type":"document","source":{"type":"file","file_id":"${file}"}}`, `{"type":"image","source":{"type":"file","file_id":"${file}"}}`, text));
  t.equal(own.status, 200, 'the same keys in different objects are no repeat');

  // Translated for this Anthropic model: the Responses and Chat Completions wires.
  const responses = await viaRelay(relay, '/vendor-a/v1/responses', b, `{"model":"${model}","input":[{"type":"message","role":"user","content":"hi"},{"type":"item_reference","type":"message","role":"user","content":"hi","id":"msg_1"}]}`);
  t.equal(responses.status, 400, 'a Responses request');
  t.match(JSON.parse(responses.text), { error: { code: 'RELAY_ERR_BAD_REQUEST', param: '/input/1/type', message: "'type' appears more than once in the object at /input/1" } });
  const chat = await viaRelay(relay, '/vendor-a/v1/chat/completions', b, `{"model":"${model}","messages":[{"role":"user","content":"hi","content":[{"type":"text","text":"bye"}]}]}`);
  t.equal(chat.status, 400, 'a Chat Completions request');
  t.match(JSON.parse(chat.text), { error: { param: '/messages/0/content', message: "'content' appears more than once in the object at /messages/0" } });
  t.equal(up.requests.length, before + 1, 'nothing more reached the upstream');
});
