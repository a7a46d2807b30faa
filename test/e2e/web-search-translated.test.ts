// Web search through translation (issue 44): a Responses client's web_search reaches an Anthropic
// upstream as web_search_20250305 and a Messages client's web_search_20250305 an OpenAI Responses
// upstream as web_search; the search the upstream ran comes back in the client's shape (a
// web_search_call item, or server_tool_use + web_search_tool_result blocks) with its citations,
// streamed and not; sent back, it reaches the vendor that ran it verbatim, and another vendor not
// at all (named in x-relay-dropped); Anthropic's pause_turn reaches each client. Real HTTP through
// Relay to fake upstreams that record what they receive.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream, type SseFrame } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { openapiProblems } from '../support/openapi-schemas.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';
import { streamProblems } from '../translation/harness.ts';

const relay = await startRelay();
const claudeUp = await startFakeUpstream();
const gptUp = await startFakeUpstream();
t.teardown(async () => { await relay.close(); await claudeUp.close(); await gptUp.close(); });

const claude = await seedRoute(relay, { baseUrl: `${claudeUp.url}/v1`, adapter: 'anthropic', model: 'ws-claude', policy: { modelIds: '*' } });
const gpt = await seedRoute(relay, { baseUrl: `${gptUp.url}/v1`, adapter: 'openai', model: 'ws-gpt', shapes: ['openai.responses'], policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.relayKeys.has(gpt.relayKeyId) && s.models.size >= 2);
const key = claude.relayKey;

// ------------------------------------------------------------------ Anthropic's answer

const CITED = 'Relay is a gateway.';
const USE = { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'relay gateway' } };
const RESULT = {
  type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01',
  content: [{ type: 'web_search_result', url: 'https://example.com/relay', title: 'Relay', encrypted_content: `EqgfCioIARgBIiQ3-secret${randomBytes(3000).toString('base64')}`, page_age: 'April 30, 2025' }],
};
const CITATION = { type: 'web_search_result_location', url: 'https://example.com/relay', title: 'Relay', encrypted_index: 'Eo8BCioIAhgB', cited_text: 'Relay is an LLM gateway that translates.' };
const USAGE = { input_tokens: 10, output_tokens: 20, server_tool_use: { web_search_requests: 1 } };

function anthropicAnswer(stop = 'end_turn') {
  const content = stop === 'pause_turn'
    ? [{ type: 'text', text: 'Let me search.' }, USE]
    : [{ type: 'text', text: 'Let me search.' }, USE, RESULT, { type: 'text', text: CITED, citations: [CITATION] }];
  return { id: 'msg_ws', type: 'message', role: 'assistant', model: 'ws-claude', content, stop_reason: stop, stop_sequence: null, usage: USAGE };
}

function anthropicFrames(): SseFrame[] {
  const f = (event: string, data: object): SseFrame => ({ event, data: { type: event, ...data } });
  return [
    f('message_start', { message: { id: 'msg_ws', type: 'message', role: 'assistant', model: 'ws-claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
    f('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    f('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Let me search.' } }),
    f('content_block_stop', { index: 0 }),
    f('content_block_start', { index: 1, content_block: { ...USE, input: {} } }),
    f('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"query": "relay' } }),
    f('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: ' gateway"}' } }),
    f('content_block_stop', { index: 1 }),
    f('content_block_start', { index: 2, content_block: RESULT }),
    f('content_block_stop', { index: 2 }),
    f('content_block_start', { index: 3, content_block: { type: 'text', text: '', citations: [] } }),
    f('content_block_delta', { index: 3, delta: { type: 'citations_delta', citation: CITATION } }),
    f('content_block_delta', { index: 3, delta: { type: 'text_delta', text: CITED } }),
    f('content_block_stop', { index: 3 }),
    f('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 20, server_tool_use: { web_search_requests: 1 } } }),
    f('message_stop', {}),
  ];
}

// ------------------------------------------------------------------ OpenAI's answer

const SEARCH_ITEM = { id: 'ws_abc', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'relay gateway', sources: [{ type: 'url', url: 'https://example.com/relay' }] } };
const ANNOTATION = { type: 'url_citation', url: 'https://example.com/relay', title: 'Relay', start_index: 0, end_index: CITED.length };
const MESSAGE_ITEM = { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: CITED, annotations: [ANNOTATION], logprobs: [] }] };
const OPENAI_USAGE = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 30 };

function openaiAnswer() {
  return { id: 'resp_ws', object: 'response', created_at: 1, status: 'completed', model: 'ws-gpt', output: [SEARCH_ITEM, MESSAGE_ITEM], usage: OPENAI_USAGE };
}

function openaiFrames(): SseFrame[] {
  let seq = 0;
  const f = (type: string, data: object): SseFrame => ({ event: type, data: { type, ...data, sequence_number: seq++ } });
  const response = { id: 'resp_ws', object: 'response', created_at: 1, model: 'ws-gpt', output: [] };
  const at = { output_index: 0, item_id: 'ws_abc' };
  const text = { item_id: 'msg_1', output_index: 1, content_index: 0 };
  return [
    f('response.created', { response: { ...response, status: 'in_progress' } }),
    f('response.output_item.added', { output_index: 0, item: { id: 'ws_abc', type: 'web_search_call', status: 'in_progress' } }),
    f('response.web_search_call.in_progress', at),
    f('response.web_search_call.searching', at),
    f('response.web_search_call.completed', at),
    f('response.output_item.done', { output_index: 0, item: SEARCH_ITEM }),
    f('response.output_item.added', { output_index: 1, item: { ...MESSAGE_ITEM, status: 'in_progress', content: [] } }),
    f('response.content_part.added', { ...text, part: { type: 'output_text', text: '', annotations: [] } }),
    f('response.output_text.delta', { ...text, delta: 'Relay is ' }),
    f('response.output_text.delta', { ...text, delta: 'a gateway.' }),
    f('response.output_text.annotation.added', { ...text, annotation_index: 0, annotation: ANNOTATION }),
    f('response.output_text.done', { ...text, text: CITED }),
    f('response.content_part.done', { ...text, part: MESSAGE_ITEM.content[0] }),
    f('response.output_item.done', { output_index: 1, item: MESSAGE_ITEM }),
    f('response.completed', { response: { ...response, status: 'completed', output: [SEARCH_ITEM, MESSAGE_ITEM], usage: OPENAI_USAGE } }),
  ];
}

async function post(path: string, body: unknown) {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, dropped: res.headers.get('x-relay-dropped'), text, json: (): any => JSON.parse(text) };
}

const RESPONSES_TOOLS = [{ type: 'web_search', filters: { allowed_domains: ['example.com'] }, user_location: { type: 'approximate', country: 'DE', city: null } }];
const MESSAGES_TOOLS = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2, allowed_domains: ['example.com'] }];

// ------------------------------------------------------------------ Responses client -> Anthropic

let claudeOutput: any[] = [];

t.test('Responses web_search -> Anthropic web_search_20250305; the answer is a web_search_call item and cited text', async (t) => {
  claudeUp.reset();
  claudeUp.enqueue({ body: anthropicAnswer() });
  const res = await post('/vendor-a/v1/responses', { model: 'ws-claude', store: false, input: 'What is Relay?', tools: RESPONSES_TOOLS });
  t.equal(res.status, 200);
  t.same(claudeUp.lastRequest()!.json.tools, [{ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['example.com'], user_location: { type: 'approximate', country: 'DE' }, cache_control: { type: 'ephemeral' } }]);
  t.equal(res.dropped, null, 'nothing dropped');
  const body = res.json();
  t.same(openapiProblems('Response', body), [], 'a valid Response');
  t.same(body.output.map((i: any) => i.type), ['message', 'web_search_call', 'message']);
  const search = body.output[1];
  t.match(search, { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'relay gateway', sources: [{ type: 'url', url: 'https://example.com/relay' }] } });
  t.notOk(JSON.stringify(body).includes('EqgfCioIARgBIiQ3-secret'), 'the encrypted content is not shown in the clear');
  t.same(body.output[2].content[0].annotations, [{ type: 'url_citation', url: 'https://example.com/relay', title: 'Relay', start_index: 0, end_index: CITED.length }]);
  claudeOutput = body.output;
});

t.test('Responses web_search -> Anthropic, streamed: the search item and its events, then the annotation', async (t) => {
  claudeUp.reset();
  claudeUp.enqueueStream({ frames: anthropicFrames() });
  const res = await post('/vendor-a/v1/responses', { model: 'ws-claude', store: false, stream: true, input: 'What is Relay?', tools: RESPONSES_TOOLS });
  t.equal(res.status, 200);
  t.same(await streamProblems('openai.responses', res.text), [], 'every event valid, in order');
  const events = sseFrames(res.text).map((f) => JSON.parse(f.data));
  const types = events.map((e) => e.type);
  const done = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'web_search_call');
  t.match(done?.item, { status: 'completed', action: { query: 'relay gateway', sources: [{ url: 'https://example.com/relay' }] } });
  for (const type of ['response.web_search_call.in_progress', 'response.web_search_call.searching', 'response.web_search_call.completed']) {
    t.ok(types.includes(type), type);
  }
  const annotation = events.find((e) => e.type === 'response.output_text.annotation.added');
  t.match(annotation, { annotation: { type: 'url_citation', url: 'https://example.com/relay', start_index: 0, end_index: CITED.length } });
  const completed = events.at(-1);
  t.equal(completed.type, 'response.completed');
  t.same(completed.response.output.map((i: any) => i.type), ['message', 'web_search_call', 'message']);
});

t.test('the web_search_call item sent back reaches Anthropic as its own blocks, verbatim', async (t) => {
  t.ok(claudeOutput.length === 3, 'the earlier answer');
  claudeUp.reset();
  claudeUp.enqueue({ body: anthropicAnswer() });
  const res = await post('/vendor-a/v1/responses', {
    model: 'ws-claude', store: false, tools: RESPONSES_TOOLS,
    input: [{ role: 'user', content: 'What is Relay?' }, ...claudeOutput, { role: 'user', content: 'And who made it?' }],
  });
  t.equal(res.status, 200);
  t.equal(res.dropped, null, 'nothing dropped');
  const sent = claudeUp.lastRequest()!.json.messages;
  t.equal(sent[1].role, 'assistant');
  t.same(sent[1].content.filter((b: any) => b.type !== 'text'), [USE, RESULT], 'server_tool_use and web_search_tool_result with their encrypted content');
});

t.test('stored by Relay, the search item resolves by item_reference and by previous_response_id (its id is long: indexed by hash)', async (t) => {
  claudeUp.reset();
  claudeUp.script(() => ({ body: anthropicAnswer() }));
  const first = await post('/vendor-a/v1/responses', { model: 'ws-claude', input: 'What is Relay?', tools: RESPONSES_TOOLS });
  t.equal(first.status, 200);
  const stored = first.json();
  t.ok(stored.output[1].id.length > 3000, 'a sealed id longer than a btree row holds (Anthropic\'s encrypted_content runs to kilobytes)');
  const byReference = await post('/vendor-a/v1/responses', {
    model: 'ws-claude', tools: RESPONSES_TOOLS,
    input: [{ role: 'user', content: 'What is Relay?' }, ...stored.output.map((i: any) => ({ type: 'item_reference', id: i.id })), { role: 'user', content: 'Who made it?' }],
  });
  t.equal(byReference.status, 200, byReference.text.slice(0, 300));
  t.same(claudeUp.lastRequest()!.json.messages[1].content.filter((b: any) => b.type !== 'text'), [USE, RESULT], 'item_reference: the blocks verbatim');
  const byPrevious = await post('/vendor-a/v1/responses', { model: 'ws-claude', tools: RESPONSES_TOOLS, previous_response_id: stored.id, input: 'Who made it?' });
  t.equal(byPrevious.status, 200);
  t.same(claudeUp.lastRequest()!.json.messages[1].content.filter((b: any) => b.type !== 'text'), [USE, RESULT], 'previous_response_id: the blocks verbatim');
  claudeUp.script(undefined);
});

t.test('an OpenAI search in the history cannot be replayed to Anthropic: named, not sent', async (t) => {
  claudeUp.reset();
  claudeUp.enqueue({ body: anthropicAnswer() });
  const res = await post('/vendor-a/v1/responses', {
    model: 'ws-claude', store: false,
    input: [{ role: 'user', content: 'What is Relay?' }, SEARCH_ITEM, MESSAGE_ITEM, { role: 'user', content: 'More?' }],
  });
  t.equal(res.status, 200);
  t.equal(res.dropped, 'history.web_search_call');
  t.notOk(JSON.stringify(claudeUp.lastRequest()!.json.messages).includes('server_tool_use'));
});

// ------------------------------------------------------------------ Messages client -> OpenAI Responses

let gptContent: any[] = [];

t.test('Messages web_search_20250305 -> OpenAI web_search; the answer is server_tool_use + web_search_tool_result and cited text', async (t) => {
  gptUp.reset();
  gptUp.enqueue({ body: openaiAnswer() });
  const res = await post('/vendor-b/v1/messages', { model: 'ws-gpt', max_tokens: 256, tools: MESSAGES_TOOLS, messages: [{ role: 'user', content: 'What is Relay?' }] });
  t.equal(res.status, 200);
  const sent = gptUp.lastRequest()!.json;
  t.same(sent.tools, [{ type: 'web_search', filters: { allowed_domains: ['example.com'] } }]);
  t.ok(sent.include.includes('web_search_call.action.sources'), 'sources asked for');
  t.equal(res.dropped, 'tools.web_search.max_uses', 'max_uses has no OpenAI field');
  const body = res.json();
  t.same(body.content.map((b: any) => b.type), ['server_tool_use', 'web_search_tool_result', 'text']);
  t.match(body.content[0], { name: 'web_search', input: { query: 'relay gateway' } });
  t.equal(body.content[1].tool_use_id, body.content[0].id);
  t.match(body.content[1].content, [{ type: 'web_search_result', url: 'https://example.com/relay', encrypted_content: '' }]);
  t.match(body.content[2], { text: CITED, citations: [{ type: 'web_search_result_location', url: 'https://example.com/relay', title: 'Relay', cited_text: CITED }] });
  gptContent = body.content;
});

t.test('Messages web_search_20250305 -> OpenAI, streamed: the SDK reads the search blocks and citations', async (t) => {
  gptUp.reset();
  gptUp.enqueueStream({ frames: openaiFrames() });
  const res = await post('/vendor-b/v1/messages', { model: 'ws-gpt', max_tokens: 256, stream: true, tools: MESSAGES_TOOLS, messages: [{ role: 'user', content: 'What is Relay?' }] });
  t.equal(res.status, 200);
  t.same(await streamProblems('anthropic.messages', res.text), []);
  const message = await sdkFinalMessage(res.text) as any;
  t.same(message.content.map((b: any) => b.type), ['server_tool_use', 'web_search_tool_result', 'text']);
  t.same(message.content[0].input, { query: 'relay gateway' });
  t.match(message.content[2], { text: CITED, citations: [{ type: 'web_search_result_location', url: 'https://example.com/relay', cited_text: CITED }] });
});

t.test('the search blocks sent back reach OpenAI as its web_search_call item, verbatim', async (t) => {
  t.ok(gptContent.length === 3, 'the earlier answer');
  gptUp.reset();
  gptUp.enqueue({ body: openaiAnswer() });
  const res = await post('/vendor-b/v1/messages', {
    model: 'ws-gpt', max_tokens: 256, tools: MESSAGES_TOOLS,
    messages: [{ role: 'user', content: 'What is Relay?' }, { role: 'assistant', content: gptContent }, { role: 'user', content: 'And who made it?' }],
  });
  t.equal(res.status, 200);
  t.equal(res.dropped, 'tools.web_search.max_uses', 'no history named');
  const input = gptUp.lastRequest()!.json.input;
  t.same(input.filter((i: any) => i.type === 'web_search_call'), [SEARCH_ITEM]);
});

t.test('an Anthropic search in the history cannot be replayed to OpenAI: named, not sent', async (t) => {
  gptUp.reset();
  gptUp.enqueue({ body: openaiAnswer() });
  const res = await post('/vendor-b/v1/messages', {
    model: 'ws-gpt', max_tokens: 256,
    messages: [{ role: 'user', content: 'What is Relay?' }, { role: 'assistant', content: [USE, RESULT, { type: 'text', text: CITED }] }, { role: 'user', content: 'More?' }],
  });
  t.equal(res.status, 200);
  t.equal(res.dropped, 'history.web_search_call');
  t.notOk(gptUp.lastRequest()!.json.input.some((i: any) => i.type === 'web_search_call'));
});

// ------------------------------------------------------------------ pause_turn

t.test('Anthropic pause_turn: the canonical client reads pause_turn, Responses a completed answer with the search in progress, Chat stop', async (t) => {
  claudeUp.reset();
  claudeUp.script(() => ({ body: anthropicAnswer('pause_turn') }));
  const canonical = await post('/v1/generate', { model: 'ws-claude', tools: [{ type: 'web_search' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'What is Relay?' }] }] });
  t.equal(canonical.status, 200);
  t.equal(canonical.json().stop_reason, 'pause_turn');
  t.match(canonical.json().content[1], { type: 'web_search_call', status: 'in_progress', origin: 'anthropic' });
  const responses = await post('/vendor-a/v1/responses', { model: 'ws-claude', store: false, input: 'What is Relay?', tools: RESPONSES_TOOLS });
  t.equal(responses.json().status, 'completed');
  t.match(responses.json().output[1], { type: 'web_search_call', status: 'in_progress' });
  // The Responses client goes on with its next question: Anthropic would refuse the unanswered search there.
  const next = await post('/vendor-a/v1/responses', {
    model: 'ws-claude', store: false, tools: RESPONSES_TOOLS,
    input: [{ role: 'user', content: 'What is Relay?' }, ...responses.json().output, { role: 'user', content: 'Go on.' }],
  });
  t.equal(next.status, 200);
  t.equal(next.dropped, 'history.web_search_call');
  t.notOk(JSON.stringify(claudeUp.lastRequest()!.json.messages).includes('server_tool_use'), 'no search without its result');
  const chat = await post('/vendor-a/v1/chat/completions', { model: 'ws-claude', web_search_options: {}, messages: [{ role: 'user', content: 'What is Relay?' }] });
  t.equal(chat.json().choices[0].finish_reason, 'stop');
  t.equal(chat.json().choices[0].message.content, 'Let me search.');
  claudeUp.script(undefined);
});

t.test('Anthropic pause_turn, streamed: the unanswered search still reaches the client', async (t) => {
  claudeUp.reset();
  const frames = anthropicFrames().slice(0, 8);
  frames.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'pause_turn', stop_sequence: null }, usage: { output_tokens: 5 } } });
  frames.push({ event: 'message_stop', data: { type: 'message_stop' } });
  claudeUp.enqueueStream({ frames });
  const res = await post('/vendor-a/v1/responses', { model: 'ws-claude', store: false, stream: true, input: 'What is Relay?', tools: RESPONSES_TOOLS });
  t.same(await streamProblems('openai.responses', res.text), []);
  const last = JSON.parse(sseFrames(res.text).at(-1)!.data);
  t.equal(last.response.status, 'completed');
  t.match(last.response.output[1], { type: 'web_search_call', status: 'in_progress', action: { query: 'relay gateway' } });
});
