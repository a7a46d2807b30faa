// A Responses conversation across a failover between vendors (issue 44 item 1): a model bound to
// an OpenAI Responses upstream (passthrough) and to an Anthropic one. Relay keeps a copy of what it
// forwards to OpenAI for such a model, so previous_response_id continues on Anthropic when OpenAI
// fails; and a turn Relay translated continues on OpenAI with the conversation sent in full
// (OpenAI does not know Relay's id). The fake upstreams fail or answer by phase, and record.
import t from 'tap';
import OpenAI from 'openai';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { faults, startFakeUpstream, type RecordedRequest } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const relay = await startRelay();
const openaiUp = await startFakeUpstream({ text: 'OpenAI says hello.' });
const anthropicUp = await startFakeUpstream({ text: 'Claude says hello.' });
const singleUp = await startFakeUpstream({ text: 'Only OpenAI here.' });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
  await singleUp.close();
});

/** Which vendor answers: the other one fails with a 500 (a failover, whichever binding is tried first). */
let serving: 'openai' | 'anthropic' = 'openai';
openaiUp.script((req: RecordedRequest) => (serving === 'openai' || req.pathname !== '/v1/responses' ? undefined : faults.serverError({ vendor: 'openai' })));
anthropicUp.script(() => (serving === 'anthropic' ? undefined : faults.serverError({ vendor: 'anthropic' })));

const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'fo-model', policy: { modelIds: '*' } });
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'fo-model', policy: { modelIds: '*' } });
const single = await seedRoute(relay, { baseUrl: `${singleUp.url}/v1`, adapter: 'openai', model: 'fo-openai-only', policy: { modelIds: '*' } });
await settled(relay, (s) => [gpt, claude, single].every((r) => s.relayKeys.has(r.relayKeyId)) && s.modelBySlug('fo-model')?.spec.bindings.length === 2);

const client = new OpenAI({ apiKey: gpt.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const lastOf = (up: typeof openaiUp, path: string): RecordedRequest => up.requests.filter((r) => r.pathname === path).at(-1)!;

t.test('started on OpenAI (passthrough), continued on Anthropic after a failover, and back', async (t) => {
  serving = 'openai';
  const first = await client.responses.create({ model: 'fo-model', input: 'Hello from turn one.' });
  t.equal(first.output_text, 'OpenAI says hello.');
  t.equal(lastOf(openaiUp, '/v1/responses').json.input, 'Hello from turn one.', 'forwarded as sent');

  serving = 'anthropic';
  const second = await client.responses.create({ model: 'fo-model', previous_response_id: first.id, input: 'Turn two.' });
  t.equal(second.output_text, 'Claude says hello.');
  const messages = lastOf(anthropicUp, '/v1/messages').json.messages;
  t.same(messages.map((m: { role: string }) => m.role), ['user', 'assistant', 'user']);
  t.match(JSON.stringify(messages[0]), /Hello from turn one\./);
  t.match(JSON.stringify(messages[1]), /OpenAI says hello\./, 'OpenAI\'s answer reached Anthropic');
  t.match(JSON.stringify(messages[2]), /Turn two\./);

  serving = 'openai';
  const third = await client.responses.create({ model: 'fo-model', previous_response_id: second.id, input: 'Turn three.' });
  t.equal(third.output_text, 'OpenAI says hello.');
  const sent = lastOf(openaiUp, '/v1/responses').json;
  t.notOk('previous_response_id' in sent, 'OpenAI does not know Relay\'s id: the conversation is sent instead');
  t.equal(sent.input.length, 5, 'all five items');
  t.match(JSON.stringify(sent.input), /Hello from turn one\.[^]*OpenAI says hello\.[^]*Turn two\.[^]*Claude says hello\.[^]*Turn three\./);
});

t.test('a model served by one vendor shape only: passthrough keeps nothing and forwards as sent', async (t) => {
  const singleClient = new OpenAI({ apiKey: single.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
  const first = await singleClient.responses.create({ model: 'fo-openai-only', input: 'One.' });
  await singleClient.responses.create({ model: 'fo-openai-only', previous_response_id: first.id, input: 'Two.' });
  t.equal(singleUp.lastRequest()!.json.previous_response_id, first.id, 'OpenAI\'s own state, as today');
  const rows = await relay.relay.db.query('SELECT 1 FROM responses_state WHERE id = $1', [first.id]);
  t.equal(rows.rows.length, 0, 'nothing stored');
});

t.test('a streamed passthrough turn is kept as well', async (t) => {
  serving = 'openai';
  // The fake's response ids follow its text: another text, another id than the first test's.
  openaiUp.configure({ text: 'OpenAI streams hello.' });
  const stream = await client.responses.create({ model: 'fo-model', input: 'Streamed turn one.', stream: true });
  let id = '';
  for await (const event of stream) if (event.type === 'response.completed') id = event.response.id;
  t.ok(id);
  serving = 'anthropic';
  const next = await client.responses.create({ model: 'fo-model', previous_response_id: id, input: 'Continue.' });
  t.equal(next.output_text, 'Claude says hello.');
  const messages = lastOf(anthropicUp, '/v1/messages').json.messages;
  t.match(JSON.stringify(messages), /Streamed turn one\.[^]*OpenAI streams hello\.[^]*Continue\./);
});

t.test('store: false, begun on Anthropic: what only Anthropic can read is left out of the OpenAI passthrough, and named', async (t) => {
  const { sealReasoning } = await import('../../plugins/wire-vendor-a/codec/reasoning-envelope.ts');
  const { webSearchItem } = await import('../../plugins/wire-vendor-a/codec/web-search-item.ts');
  // Items as a Responses client got them from a turn Claude answered (Codex resends them: store: false).
  const claudeReasoning = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: sealReasoning({ origin: 'anthropic', signature: 'EqQBCkYIBxgCKkDsig' }) };
  const claudeSearch = webSearchItem({ id: 'srvtoolu_01', origin: 'anthropic', query: 'relay', raw: [{ type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'relay' } }] });
  const openaiReasoning = { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gAAAAABopenai-own' };
  const input = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Turn one.' }] },
    claudeReasoning, claudeSearch,
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Claude says hello.' }] },
    openaiReasoning,
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Turn two.' }] },
  ];
  serving = 'openai';
  const res = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${gpt.relayKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fo-model', store: false, input }),
  });
  t.equal(res.status, 200);
  const sent = lastOf(openaiUp, '/v1/responses').json;
  t.same(sent.input.map((i: { type: string; id?: string }) => i.id ?? i.type), ['message', 'message', 'rs_2', 'message'], 'Claude\'s reasoning and search are left out; OpenAI\'s own reasoning stays');
  t.notMatch(JSON.stringify(sent), /relay1\./, 'no envelope reaches OpenAI');
  t.equal(res.headers.get('x-relay-dropped'), 'history.reasoning, history.web_search_call');
  t.equal(sent.model, 'fo-model');

  const plain = await fetch(`${relay.inferenceUrl}/vendor-a/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${gpt.relayKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'fo-model', store: false, input: [input[0], openaiReasoning, input[5]] }),
  });
  t.equal(plain.status, 200);
  t.equal(plain.headers.get('x-relay-dropped'), null, 'nothing to leave out: nothing named');
  t.equal(lastOf(openaiUp, '/v1/responses').json.input.length, 3);
});
