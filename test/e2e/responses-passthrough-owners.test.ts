// Who may name a passed-through Responses answer: OpenAI keeps it under the host's shared key, so
// Relay records its owner (migration 006) and refuses another relay key's previous_response_id,
// item_reference or reasoning item naming it by id alone with the translated path's 404, before
// anything reaches the upstream.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startRelay, seedRoute, DEFAULT_TEST_PLUGINS, type TestRelay } from '../../core/testing.ts';
import { openai, sseFrame, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { codexBody } from '../bench/agent-bodies.ts';
import { viaRelay, type Answer } from '../support/relay-client.ts';
import { keyOfOtherPolicy, keyOfSamePolicy, ownerOf } from '../support/owned-ids.ts';

type Json = Record<string, any>;

/** A relay with one OpenAI Responses model and two relay keys of the same policy. */
async function setup(t: { teardown(fn: () => Promise<void>): void }, config?: Record<string, unknown>): Promise<{ relay: TestRelay; up: FakeUpstream; a: string; b: string; model: string }> {
  const relay = await startRelay({ plugins: [...DEFAULT_TEST_PLUGINS, { use: 'agent-codex' }], ...(config ? { config } : {}) });
  const up = await startFakeUpstream({ text: 'first answer' });
  t.teardown(async () => {
    await relay.close();
    await up.close();
  });
  const seeded = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'owned-model', policy: { modelIds: '*' } });
  const b = await keyOfSamePolicy(relay, seeded);
  return { relay, up, a: seeded.relayKey, b, model: 'owned-model' };
}

const send = (relay: TestRelay, key: string, body: unknown, path = '/vendor-a/v1/responses'): Promise<Answer> => viaRelay(relay, path, key, body);

/** The response id and output item ids of an answer, JSON or a stream's frames. */
function idsOf(answer: Answer): { id: string; items: string[] } {
  if (!answer.text.startsWith('event:')) {
    const j = JSON.parse(answer.text) as Json;
    return { id: j.id, items: j.output.map((o: Json) => o.id) };
  }
  const events = answer.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Json);
  const created = events.find((e) => e.type === 'response.created')!;
  return { id: created.response.id, items: events.filter((e) => e.type === 'response.output_item.added').map((e) => e.item.id) };
}

t.test('relay-key scope: another key cannot name an answer, its owner can', async (t) => {
  const { relay, up, a, b, model } = await setup(t);

  for (const stream of [false, true]) {
    t.test(stream ? 'streamed' : 'non-streamed', async (t) => {
      up.configure({ text: `key A's secret (${stream ? 'streamed' : 'json'})` });
      const made = await send(relay, a, { model, input: 'Remember the code word.', ...(stream ? { stream: true } : {}) });
      t.equal(made.status, 200);
      const { id, items } = idsOf(made);
      t.ok(id.startsWith('resp_'));
      t.equal(items.length, 1);
      t.match(await ownerOf(relay, id), /^key:/, 'the response id is recorded');
      t.equal(await ownerOf(relay, items[0]!), await ownerOf(relay, id), 'and its output item, under the same owner');

      const before = up.requests.length;
      const previous = await send(relay, b, { model, previous_response_id: id, input: 'What was the code word?' });
      t.equal(previous.status, 404);
      t.match(JSON.parse(previous.text), { error: { code: 'previous_response_not_found', type: 'not_found_error', param: 'previous_response_id', message: new RegExp(id) } });
      const reference = await send(relay, b, { model, input: [{ type: 'item_reference', id: items[0] }, { type: 'message', role: 'user', content: 'Repeat that.' }] });
      t.equal(reference.status, 404);
      t.match(JSON.parse(reference.text), { error: { code: 'RELAY_ERR_ITEM_NOT_FOUND', param: '/input/0', message: new RegExp(items[0]!) } });
      // The key's own spelling of "item_reference" with an escape is the same type to OpenAI.
      const escaped = await send(relay, b, `{"model":"${model}","input":[{"type":"item_\\u0072eference","id":"${items[0]}"}]}`);
      t.equal(escaped.status, 404, 'an escaped item_reference is read as one');
      const streamed = await send(relay, b, { model, previous_response_id: id, input: 'Again.', stream: true });
      t.equal(streamed.status, 404, 'a streamed request is refused the same way');
      t.equal(up.requests.length, before, 'nothing reached the upstream');

      up.configure({ text: `key A continues (${stream ? 'streamed' : 'json'})` });
      const own = await send(relay, a, { model, previous_response_id: id, input: [{ type: 'item_reference', id: items[0] }, { type: 'message', role: 'user', content: 'Go on.' }] });
      t.equal(own.status, 200, 'the owner continues its conversation');
      t.equal(up.lastRequest()!.json.previous_response_id, id, 'forwarded as sent');
    });
  }

  t.test('store: false is not recorded; an unknown id is forwarded', async (t) => {
    up.configure({ text: 'an unstored answer' });
    const made = await send(relay, a, { model, input: 'Do not keep this.', store: false });
    t.equal(made.status, 200);
    const { id } = idsOf(made);
    up.configure({ text: 'key B goes on' }); // another answer id than A's (the fake's ids follow its text)
    const other = await send(relay, b, { model, previous_response_id: id, input: 'Next.' });
    t.equal(other.status, 200, 'nothing recorded, so forwarded as today (OpenAI would not know it either)');
    t.equal(up.lastRequest()!.json.previous_response_id, id);
    const rows = await relay.relay.db.query('SELECT 1 FROM responses_forwarded_owners WHERE id = $1', [id]);
    t.equal(rows.rows.length, 0);

    const unknown = await send(relay, b, { model, previous_response_id: 'resp_made_before_relay_recorded_owners', input: [{ type: 'item_reference', id: 'msg_from_elsewhere' }] });
    t.equal(unknown.status, 200, 'an id Relay never recorded is forwarded');
    t.equal(up.lastRequest()!.json.previous_response_id, 'resp_made_before_relay_recorded_owners');
  });

  t.test('the Codex route is checked too', async (t) => {
    up.configure({ text: 'a codex answer' });
    const made = await send(relay, a, { model, input: 'Codex turn.', stream: true }, '/agent-a/v1/responses');
    t.equal(made.status, 200);
    const { id } = idsOf(made);
    const before = up.requests.length;
    const other = await send(relay, b, { model, previous_response_id: id, input: 'Next.', stream: true }, '/agent-a/v1/responses');
    t.equal(other.status, 404);
    t.equal(up.requests.length, before);
  });

  t.test('the token count route is checked too: OpenAI would count another owner\'s conversation', async (t) => {
    up.script((req) => (req.pathname === '/v1/responses/input_tokens' ? { body: { object: 'response.input_tokens', input_tokens: 1234 } } : undefined));
    t.teardown(() => up.script(undefined));
    up.configure({ text: 'a conversation to count' });
    const made = await send(relay, a, { model, input: 'A long secret conversation.' });
    const { id, items } = idsOf(made);
    const before = up.requests.length;
    const counted = await send(relay, b, { model, previous_response_id: id, input: 'How long is it?' }, '/vendor-a/v1/responses/input_tokens');
    t.equal(counted.status, 404);
    t.match(JSON.parse(counted.text), { error: { code: 'previous_response_not_found', param: 'previous_response_id' } });
    const referenced = await send(relay, b, { model, input: [{ type: 'item_reference', id: items[0] }] }, '/vendor-a/v1/responses/input_tokens');
    t.equal(referenced.status, 404);
    t.equal(up.requests.length, before, 'nothing reached the upstream');
    const own = await send(relay, a, { model, previous_response_id: id, input: 'How long is it?' }, '/vendor-a/v1/responses/input_tokens');
    t.equal(own.status, 200, 'the owner counts its own');
    t.same(JSON.parse(own.text), { object: 'response.input_tokens', input_tokens: 1234 });
  });

  t.test('previous_response_id twice is refused (a parser keeping the first would name another)', async (t) => {
    const twice = await send(relay, b, `{"model":"${model}","previous_response_id":"resp_x","previous_response_id":"resp_y","input":"hi"}`);
    t.equal(twice.status, 400);
    t.match(JSON.parse(twice.text).error.message, /'previous_response_id' appears more than once/);
  });
});

/** Answers a request asking for reasoning as a reasoning model does: a reasoning item (a new rs_ id), then the text. */
function reasons(up: FakeUpstream): void {
  up.script((req) => {
    if (req.pathname !== '/v1/responses' || typeof req.json?.reasoning !== 'object') return undefined;
    const reasoning = { id: `rs_${randomBytes(16).toString('hex')}`, type: 'reasoning', summary: [] };
    const o = { model: String(req.json.model), text: `thought in ${reasoning.id}` };
    const full = openai.response(o);
    if (req.json.stream !== true) return { body: { ...full, output: [reasoning, ...(full.output as object[])] } };
    const frames = openai.responseEvents(o);
    // after response.created and response.in_progress, as OpenAI streams a reasoning model's first item
    const item = (type: string) => sseFrame({ event: type, data: { type, output_index: 0, item: reasoning } });
    return { frames: [...frames.slice(0, 2), item('response.output_item.added'), item('response.output_item.done'), ...frames.slice(2)] };
  });
}

t.test('a reasoning item naming its id without encrypted content: OpenAI reads the stored item, so it is its owner\'s', async (t) => {
  const { relay, up, a, b, model } = await setup(t);
  reasons(up);
  const bare = (id: string) => ({ type: 'reasoning', id, summary: [] });
  const next = { type: 'message', role: 'user', content: 'Go on.' };

  for (const stream of [false, true]) {
    t.test(stream ? 'made by a streamed answer' : 'made by a JSON answer', async (t) => {
      const made = await send(relay, a, { model, input: 'Think about the code word.', reasoning: { effort: 'high' }, ...(stream ? { stream: true } : {}) });
      t.equal(made.status, 200);
      const rs = idsOf(made).items[0]!;
      t.match(rs, /^rs_/);
      t.match(await ownerOf(relay, rs), /^key:/, 'the reasoning item is recorded as A\'s');

      const before = up.requests.length;
      const named = await send(relay, b, { model, input: [bare(rs), next] });
      t.equal(named.status, 404);
      t.match(JSON.parse(named.text), { error: { code: 'RELAY_ERR_ITEM_NOT_FOUND', type: 'not_found_error', param: '/input/0', message: `Item with id '${rs}' not found (input item 0 is a reasoning item with its id and no encrypted_content).` } });
      const empty = await send(relay, b, { model, input: [next, { ...bare(rs), encrypted_content: '' }] });
      t.equal(empty.status, 404, 'an empty encrypted_content is none');
      t.match(JSON.parse(empty.text), { error: { param: '/input/1' } });
      const unstored = await send(relay, b, { model, store: false, input: [bare(rs), next] });
      t.equal(unstored.status, 404, 'store: false too (OpenAI still looks the id up)');
      // The same item to OpenAI, spelled with escaped letters.
      const escapedType = await send(relay, b, `{"model":"${model}","input":[{"type":"reasonin\\u0067","id":"${rs}","summary":[]}]}`);
      t.equal(escapedType.status, 404, 'an escaped "reasoning"');
      const escapedId = await send(relay, b, `{"model":"${model}","input":[{"type":"reasoning","\\u0069d":"${rs}","summary":[]}]}`);
      t.equal(escapedId.status, 404, 'an escaped "id"');
      // A Codex-sized turn whose reasoning items all carry encrypted content, but one.
      const turn = JSON.parse(codexBody(60_000, model).toString()) as Json;
      turn.input.push(bare(rs));
      const agent = await send(relay, b, turn, '/agent-a/v1/responses');
      t.equal(agent.status, 404, 'one bare item among an agent turn\'s encrypted ones');
      t.match(agent.text, `"param":"/input/${turn.input.length - 1}"`, 'naming the item');
      t.equal(up.requests.length, before, 'nothing reached the upstream');

      const encrypted = await send(relay, b, { model, input: [{ ...bare(rs), encrypted_content: 'gAAAAB-key-B-s-own-encrypted-reasoning' }, next] });
      t.equal(encrypted.status, 200, 'with encrypted content OpenAI reads that, not the stored item');
      t.equal(up.lastRequest()!.json.input[0].id, rs, 'forwarded as sent');
      const own = await send(relay, a, { model, input: [bare(rs), next] });
      t.equal(own.status, 200, 'the owner names its own');
      t.equal(up.lastRequest()!.json.input[0].id, rs);
      const unknown = await send(relay, b, { model, input: [bare('rs_never_recorded'), next] });
      t.equal(unknown.status, 200, 'an id Relay never recorded is forwarded, as an item_reference to one is');
      t.equal(up.lastRequest()!.json.input[0].id, 'rs_never_recorded');
    });
  }
});

t.test('policy scope: keys of one policy share their answers, another policy\'s key does not', async (t) => {
  const { relay, up, a, b, model } = await setup(t, { responsesState: { scope: 'policy' } });
  up.configure({ text: 'a policy-wide answer' });
  const made = await send(relay, a, { model, input: 'Shared.' });
  const { id } = idsOf(made);
  t.match(await ownerOf(relay, id), /^policy:/);
  const shared = await send(relay, b, { model, previous_response_id: id, input: 'Next.' });
  t.equal(shared.status, 200, 'a key of the same policy continues it');

  const outsider = await keyOfOtherPolicy(relay);
  const before = up.requests.length;
  const refused = await send(relay, outsider, { model, previous_response_id: id, input: 'Next.' });
  t.equal(refused.status, 404);
  t.equal(up.requests.length, before);
});

t.test('a key written twice in an input item is refused: an upstream keeping the first value would read another item than the one checked', async (t) => {
  const { relay, up, a, b, model } = await setup(t);
  reasons(up);
  const made = await send(relay, a, { model, input: 'Think, then answer.', reasoning: { effort: 'high' } });
  t.equal(made.status, 200);
  const [rs, msg] = idsOf(made).items as [string, string];
  t.match(await ownerOf(relay, msg), /^key:/, 'A\'s message item is recorded');
  t.match(await ownerOf(relay, rs), /^key:/, 'and its reasoning item');
  const next = '{"type":"message","role":"user","content":"Go on."}';
  const body = (...items: string[]) => `{"model":"${model}","input":[${items.join(',')}]}`;

  const before = up.requests.length;
  for (const [items, param, why] of [
    [[`{"type":"item_reference","type":"message","role":"user","content":"hi","id":"${msg}"}`], '/input/0/type', 'an item_reference a parser keeping the last reads as a message'],
    [[`{"type":"message","type":"item_reference","role":"user","content":"hi","id":"${msg}"}`], '/input/0/type', 'the reverse'],
    [[next, `{"type":"item_reference","t\\u0079pe":"message","role":"user","content":"hi","id":"${msg}"}`], '/input/1/type', 'the second spelled with an escape'],
    [[`{"type":"item_reference","id":"${msg}","id":"msg_B_s_own"}`], '/input/0/id', 'its id twice'],
    [[next, `{"type":"reasoning","id":"${rs}","summary":[],"type":"message","role":"user","content":"hi"}`], '/input/1/type', 'a reasoning item named by id that the last type makes a message'],
  ] as const) {
    const refused = await send(relay, b, body(...items));
    t.equal(refused.status, 400, why);
    t.match(JSON.parse(refused.text), { error: { code: 'RELAY_ERR_BAD_REQUEST', param, message: /^'(type|id)' appears more than once in the object at \/input\/\d$/ } }, `${why}: the key and the item named`);
  }
  const turn = codexBody(60_000, model).toString();
  const agent = await send(relay, b, turn.replace('"input":[', `"input":[{"type":"item_reference","type":"message","role":"user","content":"hi","id":"${msg}"},`), '/agent-a/v1/responses');
  t.equal(agent.status, 400, 'such an item in a Codex-sized turn');
  t.match(agent.text, '"param":"/input/0/type"', 'naming the item');
  t.equal(up.requests.length, before, 'nothing reached the upstream');

  const own = await send(relay, a, body(next, `{"type":"item_reference","id":"${msg}"}`, `{"type":"message","role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]}`));
  t.equal(own.status, 200, 'the same keys in different objects, and nested in one another, are no repeat');
  t.equal(up.lastRequest()!.json.input[1].id, msg, 'forwarded as sent');

  const translated = await send(relay, b, `{"model":"${model}","max_tokens":16,"messages":[{"role":"user","role":"assistant","content":"hi"}]}`, '/vendor-b/v1/messages');
  t.equal(translated.status, 400, 'a Messages request translated for this OpenAI model too');
  t.match(JSON.parse(translated.text), { type: 'error', error: { type: 'invalid_request_error', message: "'role' appears more than once in the object at /messages/0" } });
  t.equal(up.requests.length, before + 1, 'nothing more reached the upstream');
});
