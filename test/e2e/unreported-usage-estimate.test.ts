// Answers that began and ended without the upstream's usage, on a provider without a count endpoint
// (an OpenAI-compatible server, vLLM/Ollama-like): the record carries Relay's estimate of the prompt
// and of the output the client was sent, flagged in extras.usage_estimated, priced and counted by
// budgets, so a refusing budget refuses once cut answers spent it (the audit's repro). A stream that
// finishes with usage is unchanged; a vendor with a count endpoint still counts the prompt there.
import t from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, openai } from '../support/fake-upstream.ts';
import { readThenAbort, settled, usageRecord, viaRelay } from '../support/relay-client.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});

/** The fake's answer: 74 characters in 30 chunks, 19 tokens at 4 characters a token; it reports 12 + 30. */
const ANSWER = 'Hello! This reply comes from the fake upstream, one small piece at a time.';
const ANSWER_TOKENS = Math.ceil(ANSWER.length / 4);
/** A passed-through stream's output is estimated from a sample of its frames (output-frames.ts): within this of the text's. */
const SAMPLED_SLACK = 2;
const aboutTheAnswer = (tokens: number) => Math.abs(tokens - ANSWER_TOKENS) <= SAMPLED_SLACK;
/** What `[{ role: 'user', content: 'hi' }]` estimates to: 2 bytes, 1 token. */
const HI_TOKENS = 1;
const ask = (model: string) => ({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
/** 20 of the 30 text frames read, then the client leaves: well before the usage chunk. */
const midway = (x: string) => x.split('"content":').length > 20;

/** A provider narrowed to Chat Completions: no count endpoint Relay can ask. gpt-4o: $2.50 in, $10 out per million. */
async function chatOnly(model: string): Promise<Seeded> {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model, upstreamModel: 'gpt-4o', shapes: ['openai.chat'] });
  await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length > 0);
  return s;
}

function slowChatStream(): void {
  up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30, includeUsage: true }), delayMs: 30 }, { path: '/v1/chat/completions' });
}

t.test('the audit\'s repro: cut streams spend a refusing token budget, and the request past it is refused', async (t) => {
  const s = await chatOnly('cut-budget-chat');
  const b = await relay.api<any>('POST', '/api/budgets', { metadata: { displayName: 'hard cap' }, spec: { scope: { relayKeyId: s.relayKeyId }, window: 'daily', limitTokens: 50, action: 'refuse' } });
  t.equal(b.status, 201);
  await settled(relay, (snap) => snap.byKind('budgets').has(b.body.metadata.id));
  // About 14 estimated tokens a cut answer.
  let tokens = 0;
  let served = 0;
  let refused: number | null = null;
  while (refused === null && served < 8) {
    slowChatStream();
    const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, ask('cut-budget-chat'), midway);
    const record = await usageRecord(relay, requestId);
    if (record.status !== 200) {
      refused = record.status;
      break;
    }
    served++;
    t.equal(record.extras.usage_estimated, 'input,output', `cut #${served} estimated: ${record.input_tokens} + ${record.output_tokens}`);
    t.ok(tokens < 50, 'served while the budget was not spent');
    tokens += record.input_tokens + record.output_tokens;
  }
  up.reset(); // the refused request's stream was never asked for
  t.equal(refused, 429, `the request after ${served} cut answers (${tokens} tokens) is refused`);
  t.ok(tokens >= 50, 'once they spent the budget');
  const status = await relay.api<any>('GET', `/api/budgets/${b.body.metadata.id}/status`);
  t.equal(status.body.spentTokens, tokens, 'the budget counts the estimates');
  t.equal(status.body.exceeded, true);
});

t.test('a cut stream\'s record: estimated input and output, flagged, priced', async (t) => {
  const s = await chatOnly('cut-estimate-chat');
  slowChatStream();
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, ask('cut-estimate-chat'), midway);
  const record = await usageRecord(relay, requestId);
  t.match(record, { status: 200, client_aborted: true, input_tokens: HI_TOKENS, currency: 'USD' });
  t.ok(record.output_tokens > 0 && record.output_tokens <= ANSWER_TOKENS, `${record.output_tokens} output tokens of the answer's ${ANSWER_TOKENS}`);
  t.equal(record.extras.usage_estimated, 'input,output', 'the record says which parts are estimates');
  t.notOk(record.extras.usage_counted, 'no vendor count');
  const priced = (HI_TOKENS * 2.5 + record.output_tokens * 10) / 1e6;
  t.ok(Math.abs(record.cost - priced) < 1e-6, `priced like any usage: ${record.cost} for ${priced}`);
});

t.test('a stream cut mid-answer: the output estimate is what the client was sent, not the whole answer', async (t) => {
  const s = await chatOnly('cut-early-chat');
  slowChatStream();
  const { requestId, text } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, ask('cut-early-chat'), (x) => x.split('\n\n').length > 10);
  const record = await usageRecord(relay, requestId);
  const sent = text.split('\n\n').filter((f) => f.startsWith('data: {')).map((f) => JSON.parse(f.slice(6)).choices[0]?.delta?.content ?? '').join('');
  t.ok(record.output_tokens > 0 && record.output_tokens < ANSWER_TOKENS, `${record.output_tokens} tokens, fewer than the whole answer's ${ANSWER_TOKENS}`);
  t.ok(Math.abs(record.output_tokens - Math.ceil(sent.length / 4)) <= 3, `about the ${sent.length} characters the client got`);
  t.equal(record.extras.usage_estimated, 'input,output');
});

t.test('a stream that finishes with usage is recorded as the upstream reported it', async (t) => {
  const s = await chatOnly('whole-chat');
  up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30, includeUsage: true }) }, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, ask('whole-chat'));
  t.equal(res.status, 200);
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(record, { client_aborted: false, input_tokens: 12, output_tokens: 30 });
  t.notOk(record.extras.usage_estimated, 'reported, not estimated');
  t.notOk(record.extras.usage_counted);
});

t.test('a stream that ends without usage (the server ignores stream_options): estimated', async (t) => {
  const s = await chatOnly('no-usage-chat');
  up.enqueueStream({ frames: openai.chatChunks({ model: 'gpt-4o', chunks: 30 }) }, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, ask('no-usage-chat'));
  t.equal(res.status, 200);
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.match(record, { client_aborted: false, input_tokens: HI_TOKENS });
  t.ok(aboutTheAnswer(record.output_tokens), `${record.output_tokens} output tokens for the answer's ${ANSWER_TOKENS}`);
  t.equal(record.extras.usage_estimated, 'input,output');
});

t.test('a stream the upstream broke after output: estimated too, its error recorded', async (t) => {
  const s = await chatOnly('broken-chat');
  const frames = openai.chatChunks({ model: 'gpt-4o', chunks: 30, includeUsage: true });
  up.enqueueStream({ frames: frames.slice(0, 12), delayMs: 20, then: 'reset' }, { path: '/v1/chat/completions' });
  const res = await fetch(relay.inferenceUrl + '/vendor-a/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.relayKey}` }, body: JSON.stringify(ask('broken-chat')),
  });
  t.equal(res.status, 200, 'the stream had begun');
  await res.text().catch(() => undefined); // cut where the upstream broke
  const record = await usageRecord(relay, res.headers.get('x-request-id')!);
  t.equal(record.error_code, 'upstream_stream_error');
  t.ok(record.input_tokens === HI_TOKENS && record.output_tokens > 0, `estimated: ${record.input_tokens} + ${record.output_tokens}`);
  t.equal(record.extras.usage_estimated, 'input,output');
});

t.test('a translated stream cut by the client: the output counted from the deltas Relay translated', async (t) => {
  const s = await chatOnly('cut-translated-chat');
  slowChatStream();
  const { requestId, text } = await readThenAbort(relay, '/vendor-b/v1/messages', s.relayKey,
    { model: 'cut-translated-chat', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] }, (x) => x.split('text_delta').length > 10);
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, inbound_shape: 'anthropic.messages', upstream_shape: 'openai.chat', input_tokens: HI_TOKENS });
  const got = [...text.matchAll(/"text_delta","text":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string).join('');
  t.ok(record.output_tokens >= Math.ceil(got.length / 4) && record.output_tokens < ANSWER_TOKENS, `${record.output_tokens} tokens: at least the ${got.length} characters the client got, less than the whole answer`);
  t.equal(record.extras.usage_estimated, 'input,output');
});

t.test('a vendor with a count endpoint: the prompt is its count, only the output is estimated', async (t) => {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'cut-counted-chat', upstreamModel: 'gpt-4o' });
  await settled(relay, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length > 0);
  slowChatStream();
  up.enqueue({ status: 200, body: { object: 'response.input_tokens', input_tokens: 4_000 } }, { path: '/v1/responses/input_tokens' });
  const { requestId } = await readThenAbort(relay, '/vendor-a/v1/chat/completions', s.relayKey, ask('cut-counted-chat'), midway);
  const record = await usageRecord(relay, requestId);
  t.match(record, { client_aborted: true, input_tokens: 4_000 });
  t.ok(record.output_tokens > 0 && record.output_tokens <= ANSWER_TOKENS, `${record.output_tokens} output tokens of the answer's ${ANSWER_TOKENS}`);
  t.equal(record.extras.usage_counted, 'input', 'the vendor\'s count');
  t.equal(record.extras.usage_estimated, 'output', 'only the output is an estimate');
});

t.test('/metrics counts the estimated answers by model and reason, and not as unmetered', async (t) => {
  const text = String((await relay.api<string>('GET', '/metrics')).body);
  const sample = (name: string, model: string, reason: string) => Number(new RegExp(`^${name}\\{model="${model}",reason="${reason}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  t.equal(sample('relay_estimated_answers_total', 'cut-estimate-chat', 'client_cut'), 1);
  t.equal(sample('relay_estimated_answers_total', 'no-usage-chat', 'not_reported'), 1);
  t.equal(sample('relay_estimated_answers_total', 'broken-chat', 'upstream_error'), 1);
  t.notMatch(text, /relay_unmetered_answers_total\{model="cut-estimate-chat",/, 'metered by the estimate');
});
