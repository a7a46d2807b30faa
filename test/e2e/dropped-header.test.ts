// x-relay-dropped (issue 44 item 3): a translated response names the parameters the client sent
// that no upstream saw; a passthrough response, which drops nothing, has no such header.
import t from 'tap';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => { await relay.close(); await up.close(); });

const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'drop-claude' });
const gpt = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'drop-gpt', shapes: ['openai.chat'] });
const responsesOnly = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'drop-responses', shapes: ['openai.responses'] });
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 3);

async function post(path: string, key: string, body: unknown) {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res;
}

for (const stream of [false, true]) {
  t.test(`Chat -> Messages${stream ? ', streamed' : ''}: seed and logprobs are named`, async (t) => {
    const res = await post('/vendor-a/v1/chat/completions', claude.relayKey, { model: 'drop-claude', stream, seed: 7, logprobs: true, temperature: 0.5, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(res.status, 200);
    t.equal(res.headers.get('x-relay-dropped'), 'seed, logprobs');
    t.notOk('seed' in up.lastRequest()!.json, 'the upstream did not get it');
  });
}

t.test('Responses -> Messages: text.verbosity is named; store is honoured (Relay\'s Responses state), so not', async (t) => {
  const res = await post('/vendor-a/v1/responses', claude.relayKey, { model: 'drop-claude', store: false, text: { verbosity: 'low' }, input: 'hi' });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-relay-dropped'), 'text.verbosity');
});

t.test('Messages -> Chat: top_k is named', async (t) => {
  const res = await post('/vendor-b/v1/messages', gpt.relayKey, { model: 'drop-gpt', max_tokens: 16, top_k: 5, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-relay-dropped'), 'top_k');
});

t.test('nothing dropped, no header; passthrough, no header', async (t) => {
  const translated = await post('/vendor-a/v1/chat/completions', claude.relayKey, { model: 'drop-claude', messages: [{ role: 'user', content: 'hi' }] });
  t.equal(translated.headers.get('x-relay-dropped'), null);
  const passthrough = await post('/vendor-a/v1/chat/completions', gpt.relayKey, { model: 'drop-gpt', seed: 7, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(passthrough.status, 200);
  t.equal(passthrough.headers.get('x-relay-dropped'), null);
  t.equal(up.lastRequest()!.json.seed, 7, 'passthrough forwards it');
});

t.test('Chat web_search_options reach Anthropic as its web search tool', async (t) => {
  const res = await post('/vendor-a/v1/chat/completions', claude.relayKey, { model: 'drop-claude', web_search_options: {}, messages: [{ role: 'user', content: 'news?' }] });
  t.equal(res.status, 200);
  // The last tool carries the prompt-cache breakpoint (vendor-anthropic's cacheTranslated).
  t.same(up.lastRequest()!.json.tools, [{ type: 'web_search_20250305', name: 'web_search', cache_control: { type: 'ephemeral' } }]);
  t.equal(res.headers.get('x-relay-dropped'), null);
});

t.test('server-side tools a translated route cannot run are named in x-relay-dropped', async (t) => {
  // An OpenAI search of the history cannot be replayed to Anthropic (web search itself is mapped).
  const responses = await post('/vendor-a/v1/responses', claude.relayKey, {
    model: 'drop-claude', input: [{ role: 'user', content: 'search' }, { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } }],
    tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs'] }, { type: 'function', name: 'f', parameters: { type: 'object' } }],
  });
  t.equal(responses.status, 200);
  t.equal(responses.headers.get('x-relay-dropped'), 'tools.file_search, history.web_search_call');
  // A Chat-only upstream has no web search: the tool is named.
  const messages = await post('/vendor-b/v1/messages', gpt.relayKey, {
    model: 'drop-gpt', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'web_search_20250305', name: 'web_search' }, { type: 'bash_20250124', name: 'bash' }, { name: 'f', input_schema: { type: 'object' } }],
  });
  t.equal(messages.status, 200);
  t.equal(messages.headers.get('x-relay-dropped'), 'tools.bash_20250124, tools.web_search');
  t.same(up.lastRequest()!.json.tools.map((x: any) => x.function.name), ['f']);
});

// What the upstream encoder leaves out (issue 44 item 3) is named as well; what would change the
// answer is refused before anything is sent.

t.test('stop into a Responses-only upstream is a 400 in the client\'s shape, naming the parameter and the model', async (t) => {
  const before = up.count;
  const chat = await fetch(`${relay.inferenceUrl}/vendor-a/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${responsesOnly.relayKey}` },
    body: JSON.stringify({ model: 'drop-responses', stop: ['END'], messages: [{ role: 'user', content: 'count' }] }),
  });
  t.equal(chat.status, 400);
  t.match(await chat.json(), { error: { type: 'invalid_request_error', param: 'stop', message: /cannot take `stop`.*no stop sequences/ } });
  const messages = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': responsesOnly.relayKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'drop-responses', max_tokens: 16, stop_sequences: ['END'], messages: [{ role: 'user', content: 'count' }] }),
  });
  t.equal(messages.status, 400);
  t.match(await messages.json(), { type: 'error', error: { type: 'invalid_request_error', message: /`stop`/ } });
  t.equal(up.count, before, 'the upstream saw neither');
});

for (const stream of [false, true]) {
  t.test(`Chat -> Messages${stream ? ', streamed' : ''}: sampling Anthropic cannot take as sent is named`, async (t) => {
    const res = await post('/vendor-a/v1/chat/completions', claude.relayKey, { model: 'drop-claude', stream, temperature: 1.5, top_p: 0.9, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(res.status, 200);
    t.equal(res.headers.get('x-relay-dropped'), 'temperature, top_p');
    const sent = up.lastRequest()!.json;
    t.equal(sent.temperature, 1, 'clamped to Anthropic\'s maximum');
    t.notOk('top_p' in sent);
  });
}

t.test('Messages -> Chat: thinking from Anthropic is named; is_error reaches the tool message as an Error: marker', async (t) => {
  const res = await post('/vendor-b/v1/messages', gpt.relayKey, {
    model: 'drop-gpt', max_tokens: 16, tools: [{ name: 'read', input_schema: { type: 'object' } }], messages: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'I should read.', signature: 'c2ln' }, { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'ENOENT' }] },
    ],
  });
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-relay-dropped'), 'reasoning');
  const messages = up.lastRequest()!.json.messages;
  t.match(messages[2], { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: ENOENT' });
});
