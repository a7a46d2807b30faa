// Relay's Responses state on translated routes (issue 44 item 1): previous_response_id and
// item_reference resolve from Relay's store into the conversation an Anthropic (or Chat-only)
// upstream receives, GET/DELETE/input_items answer in OpenAI's shapes, a response is visible only
// to the relay key that created it, and an unknown id is OpenAI's 404. The official `openai` SDK
// is the client; the fake upstreams record what they received.
import t from 'tap';
import OpenAI from 'openai';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai as openaiBodies, startFakeUpstream, type RecordedRequest } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const MAX_BYTES = 8192;
const relay = await startRelay({ config: { responsesState: { maxBytes: MAX_BYTES } } });
const claudeUp = await startFakeUpstream();
const chatUp = await startFakeUpstream();
const repeatingUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await claudeUp.close();
  await chatUp.close();
  await repeatingUp.close();
});

const SSE = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const WEATHER = { name: 'get_weather', input: { city: 'Paris' } };
let turn = 0;
type Json = Record<string, any>;
const lastUserText = (messages: Json[]): string => {
  const last = messages[messages.length - 1];
  const content = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
  return content.filter((b: Json) => b.type === 'text').map((b: Json) => b.text).join(' ');
};
// Each answer is unique (so are the upstream's ids); "weather" without a tool result asks for the tool.
claudeUp.script((req: RecordedRequest) => {
  const j = req.json as Json;
  const wantsTool = /weather/.test(lastUserText(j.messages)) && !JSON.stringify(j.messages).includes('tool_result');
  const body = { model: j.model, chunks: 3, ...(wantsTool ? { toolCall: WEATHER } : { text: `answer ${++turn}` }) };
  return j.stream ? { headers: SSE, frames: anthropic.events(body) } : { body: anthropic.message(body) };
});
chatUp.script((req: RecordedRequest) => {
  const j = req.json as Json;
  const body = { model: j.model, chunks: 3, text: `chat answer ${++turn}` };
  return j.stream ? { headers: SSE, frames: openaiBodies.chatChunks({ ...body, includeUsage: true }) } : { body: openaiBodies.chatCompletion(body) };
});

// An upstream whose ids repeat (some OpenAI-compatible servers draw them from a small range, others send none).
repeatingUp.script((req: RecordedRequest) => {
  const j = req.json as Json;
  const body = { model: j.model, chunks: 3, text: `repeat answer ${++turn}` };
  if (!j.stream) return { body: { ...openaiBodies.chatCompletion(body) as Json, id: 'chatcmpl-7' } };
  return { headers: SSE, frames: openaiBodies.chatChunks({ ...body, includeUsage: true }).map((f) => f.replace(/"id":"[^"]*"/, '"id":"chatcmpl-7"')) };
});

const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'state-claude', policy: { modelIds: '*' } });
const chatOnly = await seedRoute(relay, { baseUrl: `${chatUp.url}/v1`, adapter: 'openai', model: 'state-chat', shapes: ['openai.chat'], policy: { modelIds: '*' } });
const other = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'state-claude-other', policy: { modelIds: '*' } });
const repeating = await seedRoute(relay, { baseUrl: `${repeatingUp.url}/v1`, adapter: 'openai', model: 'state-repeating', shapes: ['openai.chat'], policy: { modelIds: '*' } });
await settled(relay, (s) => [claude, chatOnly, other, repeating].every((r) => s.relayKeys.has(r.relayKeyId)) && s.models.size >= 4);

const client = new OpenAI({ apiKey: claude.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const stranger = new OpenAI({ apiKey: other.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });

/** The Anthropic messages of the upstream's last request, as role: text lines. */
function received(up: typeof claudeUp): Array<{ role: string; blocks: string[] }> {
  const j = up.lastRequest()!.json as Json;
  return (j.messages as Json[]).map((m) => ({
    role: m.role,
    blocks: (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content as Json[]).map((b) => b.type === 'text' ? `text:${b.text}` : b.type),
  }));
}

async function rawGet(path: string, key: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() as Json };
}

t.test('previous_response_id: the second turn reaches the Anthropic upstream with the first turn in it', async (t) => {
  const first = await client.responses.create({ model: 'state-claude', input: 'My name is Ada.' });
  t.equal((first as Json).store, true, 'the response says it is stored');
  const firstText = first.output_text;
  t.match(firstText, /^answer \d+$/);
  const second = await client.responses.create({ model: 'state-claude', previous_response_id: first.id, input: 'What is my name?' });
  t.equal(second.previous_response_id, first.id, 'echoed');
  t.same(received(claudeUp), [
    { role: 'user', blocks: ['text:My name is Ada.'] },
    { role: 'assistant', blocks: [`text:${firstText}`] },
    { role: 'user', blocks: ['text:What is my name?'] },
  ], 'the upstream saw the whole conversation');
  t.equal(claudeUp.lastRequest()!.headers['x-relay-dropped'], undefined);
  const third = await client.responses.create({ model: 'state-claude', previous_response_id: second.id, input: 'And again?' });
  t.equal(received(claudeUp).length, 5, 'a chain of three turns arrives whole');
  t.match(third.output_text, /^answer/);
});

t.test('item_reference (the AI SDK\'s store: true default) resolves to the stored item', async (t) => {
  const first = await client.responses.create({ model: 'state-claude', input: [{ role: 'user', content: 'Remember the number 7.' }] });
  const assistantItem = first.output[0]!;
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` },
    body: JSON.stringify({ model: 'state-claude', input: [
      { role: 'user', content: [{ type: 'input_text', text: 'Remember the number 7.' }] },
      { type: 'item_reference', id: assistantItem.id },
      { role: 'user', content: [{ type: 'input_text', text: 'Which number?' }] },
    ] }),
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-relay-dropped'), null, 'nothing dropped');
  t.same(received(claudeUp), [
    { role: 'user', blocks: ['text:Remember the number 7.'] },
    { role: 'assistant', blocks: [`text:${first.output_text}`] },
    { role: 'user', blocks: ['text:Which number?'] },
  ]);
});

t.test('an unknown item_reference is a 404 naming the id', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` },
    body: JSON.stringify({ model: 'state-claude', input: [{ type: 'item_reference', id: 'msg_nowhere_0' }, { role: 'user', content: 'hi' }] }),
  });
  t.equal(res.status, 404);
  t.match(await res.json(), { error: { code: 'RELAY_ERR_ITEM_NOT_FOUND', message: /msg_nowhere_0/, param: '/input/0' } });
});

t.test('a tool-call turn, then its result via previous_response_id: tool_use and tool_result arrive intact', async (t) => {
  const tools = [{ type: 'function' as const, name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
  const first = await client.responses.create({ model: 'state-claude', tools, input: 'What is the weather in Paris?' });
  const call = first.output.find((o) => o.type === 'function_call');
  t.ok(call, 'the model asked for the tool');
  if (call?.type !== 'function_call') return;
  const second = await client.responses.create({
    model: 'state-claude', tools, previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: '18 degrees' }, { role: 'user', content: 'Thanks. Anything else?' }],
  });
  t.match(second.output_text, /^answer/);
  const messages = (claudeUp.lastRequest()!.json as Json).messages as Json[];
  t.equal(messages[1].role, 'assistant');
  t.match(messages[1].content, [{ type: 'tool_use', id: call.call_id, name: 'get_weather', input: { city: 'Paris' } }], 'the stored call');
  t.equal(messages[2].role, 'user');
  t.match(messages[2].content[0], { type: 'tool_result', tool_use_id: call.call_id }, 'its result');
  t.match(JSON.stringify(messages[2].content[0]), /18 degrees/);
  t.notMatch(JSON.stringify(messages[2].content[0]), /Thanks/, 'the new user text is not folded into the tool result');
  t.match(JSON.stringify(messages.slice(2)), /Thanks\. Anything else\?/, 'the new user text arrives');
});

t.test('streaming first turn, then a continuation', async (t) => {
  const stream = await client.responses.create({ model: 'state-claude', input: 'Stream me something.', stream: true });
  let completed: OpenAI.Responses.Response | null = null;
  for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
  t.ok(completed, 'the stream completed');
  t.equal((completed as Json).store, true);
  const streamedText = completed!.output_text ?? (completed!.output[0] as Json).content[0].text;
  const next = await client.responses.create({ model: 'state-claude', previous_response_id: completed!.id, input: 'Go on.', stream: true });
  for await (const event of next) void event;
  t.same(received(claudeUp), [
    { role: 'user', blocks: ['text:Stream me something.'] },
    { role: 'assistant', blocks: [`text:${streamedText}`] },
    { role: 'user', blocks: ['text:Go on.'] },
  ]);
});

t.test('a conversation continues across vendors: Anthropic first, then a Chat-only upstream', async (t) => {
  const first = await client.responses.create({ model: 'state-claude', input: 'Start on Claude.' });
  const second = await client.responses.create({ model: 'state-chat', previous_response_id: first.id, input: 'Continue on Chat.' });
  t.match(second.output_text, /^chat answer/);
  const messages = (chatUp.lastRequest()!.json as Json).messages as Json[];
  t.same(messages.map((m) => m.role), ['user', 'assistant', 'user']);
  t.match(JSON.stringify(messages[1]), new RegExp(first.output_text));
  const third = await client.responses.create({ model: 'state-claude', previous_response_id: second.id, input: 'Back on Claude.' });
  t.match(third.output_text, /^answer/);
  t.same(received(claudeUp).map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user'], 'and back again, whole');
});

t.test('another relay key gets a 404, never the content', async (t) => {
  const mine = await client.responses.create({ model: 'state-claude', input: 'A secret for my key only.' });
  const before = claudeUp.count;
  await t.rejects(stranger.responses.create({ model: 'state-claude', previous_response_id: mine.id, input: 'What did they say?' }),
    { status: 404, code: 'previous_response_not_found' });
  t.equal(claudeUp.count, before, 'nothing reached the upstream');
  const got = await rawGet(`/responses/${mine.id}`, other.relayKey);
  t.equal(got.status, 404);
  t.notMatch(JSON.stringify(got.body), /secret/);
  t.equal((await rawGet(`/responses/${mine.id}/input_items`, other.relayKey)).status, 404);
  const del = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses/${mine.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${other.relayKey}` } });
  t.equal(del.status, 404, 'nor can it delete it');
  t.equal((await client.responses.retrieve(mine.id)).id, mine.id, 'still there for its owner');
  const ref = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${other.relayKey}` },
    body: JSON.stringify({ model: 'state-claude', input: [{ type: 'item_reference', id: (mine.output[0] as Json).id }] }),
  });
  t.equal(ref.status, 404, 'an item_reference to another key\'s item is a 404 too');
});

t.test('a translated answer\'s id is Relay\'s own: an upstream that repeats ids takes no one\'s stored response', async (t) => {
  const keys = [claude.relayKey, other.relayKey, repeating.relayKey].map((apiKey) => new OpenAI({ apiKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 }));
  const firsts = [];
  for (const [i, key] of keys.entries()) firsts.push(await key.responses.create({ model: 'state-repeating', input: `conversation ${i}`, stream: i === 1 ? undefined : false }));
  const streamed = await keys[1]!.responses.create({ model: 'state-repeating', input: 'conversation streamed', stream: true });
  let streamedId = '';
  for await (const event of streamed) if (event.type === 'response.completed') streamedId = event.response.id;
  const ids = [...firsts.map((r) => r.id), streamedId];
  t.equal(new Set(ids).size, ids.length, `every answer has its own id (${ids.join(', ')})`);
  t.ok(ids.every((id) => /^resp_[0-9a-f]{32}$/.test(id)), 'made by Relay, not the upstream\'s chatcmpl-7');
  for (const [i, key] of keys.entries()) {
    const second = await key.responses.create({ model: 'state-repeating', previous_response_id: firsts[i]!.id, input: `turn two of ${i}` });
    const items = await key.responses.inputItems.list(second.id);
    t.same(items.data.map((item) => (item as Json).content), [`turn two of ${i}`], `key ${i}: the second turn is stored as itself`);
    t.match(JSON.stringify((repeatingUp.lastRequest()!.json as Json).messages), `conversation ${i}`, `key ${i}: its own first turn reached the upstream`);
  }
  t.equal((await keys[1]!.responses.retrieve(streamedId)).id, streamedId, 'the streamed answer is stored under the id the stream gave');
});

t.test('an unknown previous_response_id is OpenAI\'s 404', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` },
    body: JSON.stringify({ model: 'state-claude', previous_response_id: 'resp_never_was', input: 'hi' }),
  });
  t.equal(res.status, 404);
  t.same(await res.json(), { error: { message: "Previous response with id 'resp_never_was' not found.", type: 'not_found_error', param: 'previous_response_id', code: 'previous_response_not_found' } });
});

t.test('GET, input_items and DELETE in OpenAI\'s shapes', async (t) => {
  const created = await client.responses.create({ model: 'state-claude', instructions: 'Be brief.', input: [
    { role: 'user', content: 'one' }, { role: 'user', content: 'two' },
  ] });
  const got = await client.responses.retrieve(created.id);
  t.equal(got.id, created.id);
  t.equal(got.object, 'response');
  t.same(got.output, created.output, 'the output as it was answered');
  t.equal(got.instructions, 'Be brief.');
  const items = await client.responses.inputItems.list(created.id);
  t.same(items.data.map((i) => (i as Json).content), ['two', 'one'], 'newest first by default');
  t.ok(items.data.every((i) => typeof i.id === 'string' && i.id.length > 0), 'each input item has an id');
  const asc = await client.responses.inputItems.list(created.id, { order: 'asc', limit: 1 });
  t.same(asc.data.map((i) => (i as Json).content), ['one']);
  t.equal((await rawGet(`/responses/${created.id}/input_items?order=asc&limit=1`, claude.relayKey)).body.has_more, true);
  t.equal((await rawGet(`/responses/${created.id}/input_items?limit=500`, claude.relayKey)).status, 400, 'a bad limit is a 400');
  // input_items lists only this response's own input, not the conversation before it.
  const next = await client.responses.create({ model: 'state-claude', previous_response_id: created.id, input: 'three' });
  t.same((await client.responses.inputItems.list(next.id)).data.map((i) => (i as Json).content), ['three']);
  const deleted = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${claude.relayKey}` } });
  t.equal(deleted.status, 200);
  t.same(await deleted.json(), { id: created.id, object: 'response', deleted: true });
  t.equal((await rawGet(`/responses/${created.id}`, claude.relayKey)).status, 404, 'gone after DELETE');
  await t.rejects(client.responses.create({ model: 'state-claude', previous_response_id: created.id, input: 'four' }), { status: 404, code: 'previous_response_not_found' });
  t.match((await rawGet('/responses/resp_unknown', claude.relayKey)), { status: 404, body: { error: { code: 'RELAY_ERR_RESPONSE_NOT_FOUND', message: /resp_unknown/ } } });
});

t.test('store: false keeps nothing; the store\'s size cap is a 413 unless store is false', async (t) => {
  const unstored = await client.responses.create({ model: 'state-claude', store: false, input: 'forget me' });
  t.equal((unstored as Json).store, false);
  t.equal((await rawGet(`/responses/${unstored.id}`, claude.relayKey)).status, 404);
  const big = 'x'.repeat(MAX_BYTES + 10);
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` },
    body: JSON.stringify({ model: 'state-claude', input: big }),
  });
  t.equal(res.status, 413);
  t.match(await res.json(), { error: { code: 'RELAY_ERR_RESPONSE_STATE_TOO_LARGE', message: /store: false/ } });
  const unstoredBig = await client.responses.create({ model: 'state-claude', store: false, input: big });
  t.equal(unstoredBig.status, 'completed', 'with store: false the same request is served');
});

t.test('the stored conversation is sealed at rest', async (t) => {
  const created = await client.responses.create({ model: 'state-claude', input: 'plaintext-marker-1234' });
  await client.responses.retrieve(created.id); // waits for a pending write, if any
  const rows = await relay.relay.db.query<{ payload: string; owner: string }>('SELECT payload, owner FROM responses_state WHERE id = $1', [created.id]);
  t.equal(rows.rows.length, 1);
  t.match(rows.rows[0].payload, /^v1\./, 'sealed under the master key');
  t.notMatch(rows.rows[0].payload, /plaintext-marker/);
  t.equal(rows.rows[0].owner, `key:${claude.relayKeyId}`);
});

t.test('the stored-response routes need a relay key', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses/resp_anything`);
  t.equal(res.status, 401);
  t.match(await res.json(), { error: { code: 'RELAY_ERR_RELAY_KEY_INVALID' } });
  const del = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses/resp_anything`, { method: 'DELETE', headers: { authorization: 'Bearer rk_wrong' } });
  t.equal(del.status, 401);
});

t.test('a three-turn AI-SDK-style conversation (item_references and a tool turn) reaches Anthropic whole', async (t) => {
  const tools = [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
  const send = async (input: unknown[]) => {
    const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${claude.relayKey}` },
      body: JSON.stringify({ model: 'state-claude', tools, input }),
    });
    t.equal(res.status, 200);
    return await res.json() as Json;
  };
  const ask = { role: 'user', content: [{ type: 'input_text', text: 'What is the weather in Paris?' }] };
  const first = await send([ask]);
  const call = first.output.find((o: Json) => o.type === 'function_call');
  const result = { type: 'function_call_output', call_id: call.call_id, output: '18 degrees' };
  const second = await send([ask, { type: 'item_reference', id: call.id }, result]);
  const answer = second.output.find((o: Json) => o.type === 'message');
  const thanks = { role: 'user', content: [{ type: 'input_text', text: 'Thanks!' }] };
  await send([ask, { type: 'item_reference', id: call.id }, result, { type: 'item_reference', id: answer.id }, thanks]);
  const messages = (claudeUp.lastRequest()!.json as Json).messages as Json[];
  t.same(messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user']);
  t.match(messages[1].content, [{ type: 'tool_use', id: call.call_id, name: 'get_weather' }]);
  t.match(messages[2].content, [{ type: 'tool_result', tool_use_id: call.call_id }]);
  t.match(JSON.stringify(messages[3]), new RegExp(answer.content[0].text));
  t.match(JSON.stringify(messages[4]), /Thanks!/);
  t.notMatch(JSON.stringify(messages[2]), /Thanks!/, 'the new user text is not folded into the tool result');
});
