// Usage on translated routes: what the upstream reports (prompt-cache reads and writes, reasoning
// tokens included) reaches the client in the client's shape and the usage event in the canonical
// convention (input counts every prompt token, cached or not; output includes reasoning), read
// back through GET /api/logs/{x-request-id}.
import t from 'tap';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { anthropic, openai, startFakeUpstream, type ScriptedAction } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay, type Answer } from '../support/relay-client.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8' };

// Anthropic reports input without the cached parts: 12 fresh + 30 read + 5 written = 47 in all.
const ANTHROPIC_USAGE = { fresh: 12, cacheRead: 30, cacheWrite: 5, output: 7 };
const withAnthropicCache = (text: string) => text
  .replaceAll('"cache_read_input_tokens":0', `"cache_read_input_tokens":${ANTHROPIC_USAGE.cacheRead}`)
  .replaceAll('"cache_creation_input_tokens":0', `"cache_creation_input_tokens":${ANTHROPIC_USAGE.cacheWrite}`);
// OpenAI reports input with the cached part inside, and output with the reasoning inside.
const OPENAI_USAGE = { input: 50, cached: 20, output: 15, reasoning: 9 };
const withOpenAIDetails = (text: string) => text
  .replaceAll('"cached_tokens":0', `"cached_tokens":${OPENAI_USAGE.cached}`)
  .replaceAll('"reasoning_tokens":0', `"reasoning_tokens":${OPENAI_USAGE.reasoning}`);

const anthropicBody = (model: string) => ({ model, inputTokens: ANTHROPIC_USAGE.fresh, outputTokens: ANTHROPIC_USAGE.output });
const openaiBody = (model: string) => ({ model, inputTokens: OPENAI_USAGE.input, outputTokens: OPENAI_USAGE.output });

/** The upstream's answer in its shape, with the usage details above. */
function answer(path: string, model: string, stream: boolean): ScriptedAction {
  switch (path) {
    case '/v1/messages':
      return stream
        ? { headers: SSE_HEADERS, frames: anthropic.events(anthropicBody(model)).map(withAnthropicCache) }
        : { headers: { 'content-type': 'application/json' }, body: withAnthropicCache(JSON.stringify(anthropic.message(anthropicBody(model)))) };
    case '/v1/chat/completions':
      return stream
        ? { headers: SSE_HEADERS, frames: openai.chatChunks({ ...openaiBody(model), includeUsage: true }).map(withOpenAIDetails) }
        : { headers: { 'content-type': 'application/json' }, body: withOpenAIDetails(JSON.stringify(openai.chatCompletion(openaiBody(model)))) };
    default:
      return stream
        ? { headers: SSE_HEADERS, frames: openai.responseEvents(openaiBody(model)).map(withOpenAIDetails) }
        : { headers: { 'content-type': 'application/json' }, body: withOpenAIDetails(JSON.stringify(openai.response(openaiBody(model)))) };
  }
}

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await up.close();
});
up.script((req) => answer(req.pathname, String(req.json?.model), req.json?.stream === true));

const claude = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'claude-up', policy: { modelIds: '*' } });
const chatOnly = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'chat-only-up', shapes: ['openai.chat'], policy: { modelIds: '*' } });
const responsesOnly = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'responses-only-up', shapes: ['openai.responses'], policy: { modelIds: '*' } });
await settled(relay, (s) => [claude, chatOnly, responsesOnly].every((x) => s.relayKeys.has(x.relayKeyId)) && s.models.size >= 3);
const key = claude.relayKey;

const FROM_ANTHROPIC = {
  input_tokens: ANTHROPIC_USAGE.fresh + ANTHROPIC_USAGE.cacheRead + ANTHROPIC_USAGE.cacheWrite,
  output_tokens: ANTHROPIC_USAGE.output, cache_read_tokens: ANTHROPIC_USAGE.cacheRead, cache_write_tokens: ANTHROPIC_USAGE.cacheWrite, reasoning_tokens: 0,
};
const FROM_OPENAI = {
  input_tokens: OPENAI_USAGE.input, output_tokens: OPENAI_USAGE.output, cache_read_tokens: OPENAI_USAGE.cached, cache_write_tokens: 0, reasoning_tokens: OPENAI_USAGE.reasoning,
};

async function recordOf(got: Answer): Promise<Record<string, unknown>> {
  return usageRecord(relay, got.headers.get('x-request-id')!);
}

const lastData = (text: string, pick: (data: any) => boolean) => sseFrames(text).map((f) => (f.data === '[DONE]' ? null : JSON.parse(f.data))).filter((d) => d && pick(d)).at(-1);

t.test('Anthropic usage with cache reads and writes -> OpenAI chat client and the usage event', async (t) => {
  for (const stream of [false, true]) {
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, {
      model: 'claude-up', stream, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream_options: { include_usage: true } } : {}),
    });
    t.equal(got.status, 200);
    const usage = stream ? lastData(got.text, (d) => d.usage)?.usage : JSON.parse(got.text).usage;
    t.match(usage, { prompt_tokens: FROM_ANTHROPIC.input_tokens, completion_tokens: ANTHROPIC_USAGE.output, prompt_tokens_details: { cached_tokens: ANTHROPIC_USAGE.cacheRead } }, `stream ${stream}: the client's usage`);
    t.match(await recordOf(got), { ...FROM_ANTHROPIC, inbound_shape: 'openai.chat', upstream_shape: 'anthropic.messages', status: 200 }, `stream ${stream}: the usage event`);
  }
});

t.test('Anthropic usage -> Responses client (streamed): response.completed and the usage event', async (t) => {
  const got = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: 'claude-up', stream: true, input: 'hi' });
  const completed = lastData(got.text, (d) => d.type === 'response.completed');
  t.match(completed?.response.usage, { input_tokens: FROM_ANTHROPIC.input_tokens, output_tokens: ANTHROPIC_USAGE.output, input_tokens_details: { cached_tokens: ANTHROPIC_USAGE.cacheRead } });
  t.match(await recordOf(got), { ...FROM_ANTHROPIC, inbound_shape: 'openai.responses' });
});

for (const target of [{ model: 'chat-only-up', shape: 'openai.chat' }, { model: 'responses-only-up', shape: 'openai.responses' }]) {
  t.test(`OpenAI usage with cached and reasoning tokens (${target.shape}) -> Anthropic client and the usage event`, async (t) => {
    for (const stream of [false, true]) {
      const got = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: target.model, stream, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
      t.equal(got.status, 200);
      const usage = stream ? (await sdkFinalMessage(got.text)).usage : JSON.parse(got.text).usage;
      t.match(usage, {
        input_tokens: OPENAI_USAGE.input - OPENAI_USAGE.cached, cache_read_input_tokens: OPENAI_USAGE.cached, output_tokens: OPENAI_USAGE.output,
      }, `stream ${stream}: Anthropic's usage counts input without the cached part`);
      t.match(await recordOf(got), { ...FROM_OPENAI, inbound_shape: 'anthropic.messages', upstream_shape: target.shape }, `stream ${stream}: the usage event`);
    }
  });
}

t.test('canonical caller: usage in the answer and the usage event carry every count', async (t) => {
  for (const stream of [false, true]) {
    const got = await viaRelay(relay, '/v1/generate', key, { model: 'responses-only-up', stream, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    const usage = stream ? lastData(got.text, (d) => d.type === 'end')?.usage : JSON.parse(got.text).usage;
    // The canonical usage also names the model that answered (Usage.model), which prices it.
    t.same(usage, { ...FROM_OPENAI, model: 'responses-only-up' }, `stream ${stream}: the canonical usage`);
    t.match(await recordOf(got), { ...FROM_OPENAI, inbound_shape: 'canonical', upstream_shape: 'openai.responses' });
  }
});

// Issue 38 item 1: Anthropic sends the input count in message_start, and Claude Code shows context
// use from it. A translated stream names Relay's estimate there (bytes / 4 of the request's text:
// core/canonical/input-token-estimate.ts), and message_delta the upstream's exact count.
for (const target of ['chat-only-up', 'responses-only-up']) {
  t.test(`Messages client streamed from ${target}: message_start carries an estimate, message_delta the exact count`, async (t) => {
    const text = 'word '.repeat(800); // 4,000 bytes: about 1,000 tokens
    const got = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: target, stream: true, max_tokens: 64, messages: [{ role: 'user', content: text }] });
    t.equal(got.status, 200);
    const frames = sseFrames(got.text).map((f) => JSON.parse(f.data));
    const start = frames.find((d) => d.type === 'message_start');
    t.ok(start.message.usage.input_tokens >= 1_000 && start.message.usage.input_tokens <= 1_010, `message_start's estimate (${start.message.usage.input_tokens}) is bytes / 4 of the request`);
    const delta = frames.find((d) => d.type === 'message_delta');
    t.equal(delta.usage.input_tokens, OPENAI_USAGE.input - OPENAI_USAGE.cached, "message_delta carries the upstream's count");
    t.equal((await sdkFinalMessage(got.text)).usage.input_tokens, OPENAI_USAGE.input - OPENAI_USAGE.cached, "the SDK's final message ends with the upstream's count");
    t.match(await recordOf(got), { input_tokens: OPENAI_USAGE.input }, 'the usage event records the upstream count, not the estimate');
  });
}
