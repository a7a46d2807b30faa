// Answers cut before the upstream reported usage: a Codex turn (Responses, streamed) whose client
// leaves mid-stream ends before OpenAI's response.completed, the only event with usage. Relay counts
// the prompt as it was sent at OpenAI's counter, after the answer, and records it (cost and budget
// included) with extras.usage_counted, and the output the client got as an estimate
// (extras.usage_estimated: "output"); the record's latency is the request's. A whole answer, or an
// Anthropic stream (its first event has the prompt), is not counted; a counter that fails leaves the
// prompt to Relay's estimate, and one answered as missing (404) is not asked again until its host is
// edited (missing-counters.ts). A Chat stream (passed through, or Relay's translation of a Messages one) is
// counted as the Responses input Relay makes of it, the only input OpenAI's counter takes; a
// provider narrowed to shapes without the counter gets Relay's estimate (unreported-usage-estimate.test.ts).
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, openai, anthropic, type RecordedRequest } from '../support/fake-upstream.ts';
import { readThenAbort, settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

const COUNT_PATH = '/v1/responses/input_tokens';
const counts = (): RecordedRequest[] => up.requests.filter((r) => r.pathname === COUNT_PATH);

/** gpt-4o is in the shipped price table: $2.50 per million input tokens. */
async function seed(model: string, adapter: 'openai' | 'anthropic' = 'openai', upstreamModel = adapter === 'openai' ? 'gpt-4o' : 'claude-sonnet-4-5'): Promise<Seeded> {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter, model, upstreamModel, hostKeys: ['sk-upstream-count'] });
  await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length > 0);
  return s;
}


/** A Responses stream that sends its first events, then waits long enough for the client to leave. */
function slowResponsesStream(model: string): void {
  const frames = openai.responseEvents({ model, text: 'one two three four five six seven eight' });
  up.enqueueStream({ frames, delayMs: 40 }, { path: '/v1/responses' });
}

const codexTurn = (model: string) => ({
  model, stream: true, store: false, instructions: 'You are Codex.', input: [{ role: 'user', content: [{ type: 'input_text', text: 'fix the bug' }] }],
  tools: [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } }], reasoning: { effort: 'high' }, include: ['reasoning.encrypted_content'],
});

t.test('a Responses stream cut by the client: the prompt is counted at OpenAI\'s counter and billed', async (t) => {
  const s = await seed('cut-codex');
  const budget = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'cut budget' }, spec: { scope: { relayKeyId: s.relayKeyId }, window: 'daily', limitAmount: 10 } });
  t.equal(budget.status, 201);
  await settled(relay, (snap) => snap.byKind('budgets').has(budget.body.metadata.id));
  slowResponsesStream('gpt-4o');
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 41_234 }, headersDelayMs: 150 }, { path: COUNT_PATH });
  const before = counts().length;
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/responses', s.relayKey, codexTurn('cut-codex'), (x) => x.includes('response.output_text.delta'));

  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, status: 200, input_tokens: 41_234, currency: 'USD' });
  t.ok(record.output_tokens > 0, `the output the client got, estimated (${record.output_tokens})`);
  t.ok(Math.abs(record.cost - (41_234 * 2.5 + record.output_tokens * 10) / 1e6) < 1e-6, 'the prompt at gpt-4o\'s input rate, the output at its output rate');
  t.equal(record.extras.usage_counted, 'input', 'the record says where its tokens came from');
  t.equal(record.extras.usage_estimated, 'output', 'and which are estimates');
  const sent = counts().slice(before);
  t.equal(sent.length, 1, 'one count');
  t.same(Object.keys(sent[0]!.json).sort(), ['input', 'instructions', 'model', 'reasoning', 'tools'], 'only the members the counter takes');
  t.equal(sent[0]!.json.model, 'gpt-4o', 'the prompt as it was sent upstream');
  t.equal(sent[0]!.headers.authorization, 'Bearer sk-upstream-count', 'with the route\'s host key');
  t.ok(Date.parse(record.finished_at) <= sent[0]!.receivedAt, 'the record ends when the request did, not when the count came');
  const status = await relay.api<any>('GET', `/api/budgets/${budget.body.metadata.id}/status`);
  t.ok(status.body.spentAmount >= 0.1, `the budget counts it (${status.body.spentAmount} USD)`);
});

t.test('a translated stream cut by the client: the translated prompt is counted', async (t) => {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'cut-claude-code', upstreamModel: 'gpt-4o', shapes: ['openai.responses', 'openai.input_tokens'] });
  await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length > 0);
  slowResponsesStream('gpt-4o');
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 7_000 } }, { path: COUNT_PATH });
  const before = counts().length;
  const { requestId } = await readThenAbort(relay, '/vendor-b/v1/messages', s.relayKey,
    { model: 'cut-claude-code', max_tokens: 64, stream: true, system: 'You are Claude Code.', messages: [{ role: 'user', content: 'fix the bug' }] }, (x) => x.includes('content_block_delta'));
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, inbound_shape: 'anthropic.messages', upstream_shape: 'openai.responses', input_tokens: 7_000 });
  t.equal(record.extras.usage_counted, 'input');
  const sent = counts().slice(before);
  t.equal(sent.length, 1);
  t.match(sent[0]!.json, { model: 'gpt-4o', instructions: 'You are Claude Code.' }, 'the Responses request Relay made of the Messages one, counted');
});

t.test('a translated stream from Anthropic cut by the client: the usage its first event reported, cache reads included, and no count', async (t) => {
  const claude = await seed('cut-codex-on-claude', 'anthropic');
  const frames = anthropic.events({ model: 'claude-sonnet-4-5', inputTokens: 900, text: 'one two three four five six seven eight' });
  // An agent's turn: most of the prompt read from the cache, which a count could not tell apart.
  const start = JSON.parse(frames[0]!.split('data: ')[1]!) as { message: { usage: Record<string, unknown> } };
  start.message.usage = { ...start.message.usage, input_tokens: 50, cache_read_input_tokens: 40_000 };
  frames[0] = `event: message_start\ndata: ${JSON.stringify(start)}\n\n`;
  up.enqueueStream({ frames, delayMs: 40 }, { path: '/v1/messages' });
  const before = up.requests.length;
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/responses', claude.relayKey, codexTurn('cut-codex-on-claude'), (x) => x.includes('response.output_text.delta'));
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, inbound_shape: 'openai.responses', upstream_shape: 'anthropic.messages', input_tokens: 40_050, cache_read_tokens: 40_000 });
  // The first event reported 1 output token; the deltas the client was sent estimate to more.
  t.ok(record.output_tokens > 1, `output raised to what was seen (${record.output_tokens})`);
  t.equal(record.extras.usage_estimated, 'output', 'and flagged as an estimate; the prompt is as reported');
  // claude-sonnet-4-5: $3 per million input tokens, $0.30 cache reads, $15 output; a count would bill all 40,050 at $3 (0.12).
  t.equal(record.cost, Number((50 * 3 / 1e6 + 40_000 * 0.3 / 1e6 + record.output_tokens * 15 / 1e6).toFixed(6)), 'cache reads at their rate');
  t.notOk(record.extras.usage_counted, 'reported, not counted');
  t.same(up.requests.slice(before).map((r) => r.pathname), ['/v1/messages'], 'Anthropic\'s counter was not asked');
});

t.test('a translated stream from Anthropic that the upstream closes before its end: the usage its first event reported', async (t) => {
  const claude = await seed('closed-early-on-claude', 'anthropic');
  const frames = anthropic.events({ model: 'claude-sonnet-4-5', inputTokens: 1_234, text: 'one two three four' });
  // message_start, the block's start, ping and two deltas; no message_delta or message_stop.
  up.enqueueStream({ frames: frames.slice(0, 5) }, { path: '/v1/messages' });
  const res = await viaRelay(relay, '/vendor-a/v1/responses', claude.relayKey, codexTurn('closed-early-on-claude'));
  t.equal(res.status, 200, 'the stream had begun');
  t.match(res.text, /response\.failed|"type":"error"/, 'and ends in an error event');
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(record, { client_aborted: false, input_tokens: 1_234 });
});

t.test('a counter that fails leaves the prompt to Relay\'s estimate, and nothing else changes', async (t) => {
  const s = await seed('cut-count-fails');
  slowResponsesStream('gpt-4o');
  up.enqueue({ status: 500, body: { error: { message: 'counter down' } } }, { path: COUNT_PATH });
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/responses', s.relayKey, codexTurn('cut-count-fails'), (x) => x.includes('response.output_text.delta'));
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true });
  t.ok(record.input_tokens > 0 && record.cost > 0, `estimated: ${record.input_tokens} input tokens`);
  t.notOk(record.extras.usage_counted);
  t.equal(record.extras.usage_estimated, 'input,output');
  t.equal((await viaRelay(relay, '/vendor-a/v1/responses', s.relayKey, { model: 'cut-count-fails', input: 'hi' })).status, 200, 'the route still serves');
});

/** A Codex turn on `model` cut by the client after its first text; its usage record. */
async function cutCodexTurn(s: Seeded, model: string): Promise<any> {
  slowResponsesStream('gpt-4o');
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/responses', s.relayKey, codexTurn(model), (x) => x.includes('response.output_text.delta'));
  return usageRecord(relay, requestId);
}

t.test('a host without the counter (404) is not asked again until the host is edited', async (t) => {
  const s = await seed('cut-count-missing');
  up.enqueue({ status: 404, body: { error: { message: 'Not Found' } } }, { path: COUNT_PATH });
  const before = counts().length;
  const first = await cutCodexTurn(s, 'cut-count-missing');
  t.equal(counts().length, before + 1, 'the first cut answer asks the counter');
  t.equal(first.extras.usage_estimated, 'input,output', 'answered 404: the prompt estimated');

  const second = await cutCodexTurn(s, 'cut-count-missing');
  t.equal(counts().length, before + 1, 'the next cut answer does not ask it again');
  t.ok(second.input_tokens > 0 && second.cost > 0, `estimated and billed (${second.input_tokens} input tokens)`);
  t.equal(second.extras.usage_estimated, 'input,output');

  const host = await relay.api<any>('GET', `/api/hosts/${s.hostId}`);
  const put = await relay.api('PUT', `/api/hosts/by-id/${s.hostId}`, { spec: { ...host.body.spec, timeoutMs: 60_000 } });
  t.equal(put.status, 200, JSON.stringify(put.body));
  await settled(relay, (snap) => snap.hosts.get(s.hostId)?.spec.timeoutMs === 60_000);
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 3_210 } }, { path: COUNT_PATH });
  const third = await cutCodexTurn(s, 'cut-count-missing');
  t.equal(counts().length, before + 2, 'an edited host is asked again');
  t.equal(third.input_tokens, 3_210);
  t.equal(third.extras.usage_counted, 'input');
});

t.test('a counter that failed otherwise (500) is asked again at the next cut answer', async (t) => {
  const s = await seed('cut-count-down');
  up.enqueue({ status: 500, body: { error: { message: 'counter down' } } }, { path: COUNT_PATH });
  const before = counts().length;
  t.equal((await cutCodexTurn(s, 'cut-count-down')).extras.usage_estimated, 'input,output');
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 2_345 } }, { path: COUNT_PATH });
  const next = await cutCodexTurn(s, 'cut-count-down');
  t.equal(counts().length, before + 2, 'asked both times');
  t.equal(next.input_tokens, 2_345);
});

t.test('answers with usage are not counted: a whole Responses answer, an Anthropic stream cut after its first event', async (t) => {
  const s = await seed('whole-codex');
  const before = counts().length;
  const whole = await viaRelay(relay, '/vendor-a/v1/responses', s.relayKey, { model: 'whole-codex', input: 'hi' });
  t.equal(whole.status, 200);
  t.ok((await usageRecord(relay, whole.headers.get('x-request-id')!)).input_tokens > 0);

  const claude = await seed('cut-claude', 'anthropic');
  up.enqueueStream({ frames: anthropic.events({ model: 'claude-sonnet-4-5', inputTokens: 900, text: 'one two three four five six' }), delayMs: 40 }, { path: '/v1/messages' });
  const { requestId } = await readThenAbort(relay, '/vendor-b/v1/messages', claude.relayKey, { model: 'cut-claude', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.includes('content_block_delta'));
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, input_tokens: 900 }, 'message_start had the prompt');
  t.ok(record.output_tokens >= 1, `the output is what was reported, or the estimate of what was seen when more (${record.output_tokens})`);
  t.notOk(record.extras.usage_counted);
  t.equal(up.requests.filter((r) => r.pathname === '/v1/messages/count_tokens').length, 0, 'Anthropic\'s counter was not asked');
  t.equal(counts().length, before, 'nor OpenAI\'s');
});

t.test('a Chat stream cut by the client: counted as the Responses input Relay makes of it', async (t) => {
  const s = await seed('cut-chat');
  up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30 }), delayMs: 40 }, { path: '/v1/chat/completions' });
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 4_000 } }, { path: COUNT_PATH });
  const before = counts().length;
  const chat = {
    model: 'cut-chat', stream: true,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }],
    tools: [{ type: 'function', function: { name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: {} } } }],
  };
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat, (x) => x.split('\n\n').length > 4);
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, inbound_shape: 'openai.chat', upstream_shape: 'openai.chat', input_tokens: 4_000 });
  t.ok(Math.abs(record.cost - (4_000 * 2.5 + record.output_tokens * 10) / 1e6) < 1e-6, 'the counted prompt and the estimated output, priced');
  t.equal(record.extras.usage_counted, 'input');
  const sent = counts().slice(before);
  t.equal(sent.length, 1, 'one count');
  t.match(sent[0]!.json, { model: 'gpt-4o', instructions: 'Be brief.', tools: [{ type: 'function', name: 'shell', description: 'Runs a command' }] }, 'Responses members, not Chat ones');
  t.match(JSON.stringify(sent[0]!.json.input), /"hi"/, 'the user\'s turn as input');
  t.notOk('messages' in sent[0]!.json);
});

t.test('a Messages stream translated to Chat Completions and cut: the prompt is counted', async (t) => {
  const s = await seed('cut-claude-on-chat');
  up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30 }), delayMs: 40 }, { path: '/v1/chat/completions' });
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 5_555 } }, { path: COUNT_PATH });
  const { requestId } = await readThenAbort(relay, '/vendor-b/v1/messages', s.relayKey,
    { model: 'cut-claude-on-chat', max_tokens: 64, stream: true, system: 'You are Claude Code.', messages: [{ role: 'user', content: 'fix the bug' }] }, (x) => x.includes('content_block_delta'));
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, inbound_shape: 'anthropic.messages', upstream_shape: 'openai.chat', input_tokens: 5_555 });
  t.equal(record.extras.usage_counted, 'input');
});

t.test('a provider without the counter among its shapes: a cut Chat stream is estimated, no count asked', async (t) => {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'cut-chat-only', upstreamModel: 'gpt-4o', shapes: ['openai.chat'] });
  await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length > 0);
  up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30 }), delayMs: 40 }, { path: '/v1/chat/completions' });
  const before = counts().length;
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, { model: 'cut-chat-only', stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.split('\n\n').length > 4);
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, input_tokens: 1 });
  t.equal(record.extras.usage_estimated, 'input,output');
  t.equal(counts().length, before, 'no count was asked');
});

t.test('/metrics counts the answers whose usage Relay estimated by model and reason; a counted one is not among them', async (t) => {
  const text = String((await relay.api<string>('GET', '/metrics')).body);
  const estimated = (model: string, reason: string) => Number(new RegExp(`^relay_estimated_answers_total\\{model="${model}",reason="${reason}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  t.equal(estimated('cut-chat-only', 'client_cut'), 1, 'no counter among the shapes');
  t.equal(estimated('cut-count-fails', 'client_cut'), 1, 'the counter failed');
  t.notMatch(text, /relay_unmetered_answers_total\{model="cut-chat-only",/, 'metered by the estimate');
  t.notMatch(text, /relay_unmetered_answers_total\{model="cut-chat",/, 'counted: metered');
  t.notMatch(text, /relay_unmetered_answers_total\{model="cut-codex-on-claude",/, 'reported before the cut: metered');
});

t.test('Claude Code cuts a passed-through Messages stream: the output is the estimate of what it was sent, not the 1 token of message_start', async (t) => {
  const claude = await seed('cut-claude-output', 'anthropic');
  const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
  up.enqueueStream({ frames: anthropic.events({ model: 'claude-sonnet-4-5', inputTokens: 900, text }), delayMs: 20 }, { path: '/v1/messages' });
  const { requestId } = await readThenAbort(relay, '/vendor-b/v1/messages', claude.relayKey,
    { model: 'cut-claude-output', max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.split('content_block_delta').length > 8);
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, inbound_shape: 'anthropic.messages', upstream_shape: 'anthropic.messages', input_tokens: 900 }, 'the prompt as message_start reported it');
  t.ok(record.output_tokens > 1 && record.output_tokens <= Math.ceil(text.length / 4), `output estimated from the deltas sent (${record.output_tokens})`);
  t.equal(record.extras.usage_estimated, 'output');
});
