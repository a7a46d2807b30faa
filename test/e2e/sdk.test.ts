// The official SDKs as Relay's clients: `openai` on /vendor-a/v1 and `@anthropic-ai/sdk` on
// /vendor-b, with a relay key as their API key. Same-shape routes pass through; the SDKs' stream
// helpers reject malformed event sequences, so translated routes (OpenAI SDK to an Anthropic
// upstream and back) are checked the same way.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const TEXT = 'Hello from the fake upstream, in several small pieces.';
const relay = await startRelay();
const openaiUp = await startFakeUpstream({ chunks: 6, text: TEXT });
const anthropicUp = await startFakeUpstream({ chunks: 6, text: TEXT });
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'sdk-gpt', upstreamModel: 'gpt-upstream', hostKeys: ['sk-openai-host'], policy: { modelIds: '*' } });
const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'sdk-claude', hostKeys: ['sk-ant-host'], policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(gpt.relayKeyId) && s.relayKeys.has(claude.relayKeyId) && s.models.size >= 2);

const openai = new OpenAI({ apiKey: gpt.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: claude.relayKey, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
const messages = [{ role: 'user' as const, content: 'Say hello.' }];

/** Each model, once passed through (same shape) and once translated (the other vendor). */
const MODELS = [
  { name: 'passthrough', model: 'sdk-gpt' },
  { name: 'translated from Anthropic', model: 'sdk-claude' },
];

t.test('openai: chat completions', async (t) => {
  for (const { name, model } of MODELS) {
    const completion = await openai.chat.completions.create({ model, messages });
    t.equal(completion.choices[0]!.message.content, TEXT, `${name}: not streamed`);
    t.equal(completion.choices[0]!.finish_reason, 'stop');
    t.ok(completion.usage!.prompt_tokens > 0, `${name}: usage`);

    const stream = await openai.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    t.equal(text, TEXT, `${name}: streamed`);
    t.equal(finish, 'stop');

    const helper = openai.chat.completions.stream({ model, messages });
    const final = await helper.finalChatCompletion();
    t.equal(final.choices[0]!.message.content, TEXT, `${name}: .stream() helper`);
  }
  t.equal(openaiUp.lastRequest()!.headers.authorization, 'Bearer sk-openai-host', 'the host key goes upstream, not the relay key');
});

t.test('openai: responses', async (t) => {
  for (const { name, model } of MODELS) {
    const response = await openai.responses.create({ model, input: 'Say hello.' });
    t.equal(response.output_text, TEXT, `${name}: not streamed`);
    t.equal(response.status, 'completed');

    const stream = await openai.responses.create({ model, input: 'Say hello.', stream: true });
    let text = '';
    let completed = false;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = true;
    }
    t.equal(text, TEXT, `${name}: streamed`);
    t.ok(completed, `${name}: response.completed`);

    const final = await openai.responses.stream({ model, input: 'Say hello.' }).finalResponse();
    t.equal(final.output_text, TEXT, `${name}: .stream() helper`);
  }
});

t.test('openai: embeddings (base64 by default, decoded by the SDK)', async (t) => {
  const result = await openai.embeddings.create({ model: 'sdk-gpt', input: ['one', 'two'] });
  t.equal(result.data.length, 2);
  t.equal(result.data[0]!.embedding.length, 8);
  t.ok(result.data[0]!.embedding.every((x) => typeof x === 'number' && Number.isFinite(x)));
  const floats = await openai.embeddings.create({ model: 'sdk-gpt', input: 'one', encoding_format: 'float' });
  t.equal(floats.data[0]!.embedding.length, 8);
});

t.test('anthropic: messages.create and messages.stream().finalMessage()', async (t) => {
  for (const { name, model } of [{ name: 'passthrough', model: 'sdk-claude' }, { name: 'translated from OpenAI', model: 'sdk-gpt' }]) {
    const message = await anthropic.messages.create({ model, max_tokens: 64, messages });
    t.equal(message.type, 'message');
    t.same(message.content.map((b) => (b.type === 'text' ? b.text : b.type)), [TEXT], `${name}: not streamed`);
    t.equal(message.stop_reason, 'end_turn');

    const final = await anthropic.messages.stream({ model, max_tokens: 64, messages }).finalMessage();
    t.same(final.content.map((b) => (b.type === 'text' ? b.text : b.type)), [TEXT], `${name}: streamed`);
    t.equal(final.stop_reason, 'end_turn');
    t.ok(final.usage.output_tokens > 0, `${name}: usage`);
  }
  const received = anthropicUp.lastRequest()!;
  t.equal(received.headers['x-api-key'], 'sk-ant-host');
  t.equal(received.headers.authorization, undefined, 'the relay key never reaches the upstream');
});

t.test("Relay's errors surface as the SDKs' typed errors", async (t) => {
  const failure = async (p: Promise<unknown>): Promise<{ status?: number; name: string; error?: unknown }> => {
    try {
      await p;
      return { name: 'none' };
    } catch (err) {
      return err as { status?: number; name: string; error?: unknown };
    }
  };
  const badOpenAI = new OpenAI({ apiKey: 'rk_wrong', baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
  const unauthorized = await failure(badOpenAI.chat.completions.create({ model: 'sdk-gpt', messages }));
  t.ok(unauthorized instanceof OpenAI.AuthenticationError, `openai: AuthenticationError (got ${unauthorized.name})`);
  t.match(unauthorized, { status: 401, error: { type: 'authentication_error', code: 'RELAY_ERR_RELAY_KEY_INVALID' } });
  const notFound = await failure(openai.chat.completions.create({ model: 'no-such-model', messages }));
  t.ok(notFound instanceof OpenAI.NotFoundError, `openai: NotFoundError (got ${notFound.name})`);
  const badAnthropic = new Anthropic({ apiKey: 'rk_wrong', baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
  const anthropicUnauthorized = await failure(badAnthropic.messages.create({ model: 'sdk-claude', max_tokens: 8, messages }));
  t.ok(anthropicUnauthorized instanceof Anthropic.AuthenticationError, `anthropic: AuthenticationError (got ${anthropicUnauthorized.name})`);
  t.match(anthropicUnauthorized, { status: 401, error: { type: 'error', error: { type: 'authentication_error' } } });
});

t.test('tool calls through the SDK stream helpers, passed through and translated', async (t) => {
  const toolCall = { name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } };
  const openaiTools = await startFakeUpstream({ chunks: 4, toolCall });
  const anthropicTools = await startFakeUpstream({ chunks: 4, toolCall });
  t.teardown(async () => {
    await openaiTools.close();
    await anthropicTools.close();
  });
  const gptTools = await seedRoute(relay, { baseUrl: `${openaiTools.url}/v1`, adapter: 'openai', model: 'sdk-gpt-tools', policy: { modelIds: '*' } });
  const claudeTools = await seedRoute(relay, { baseUrl: `${anthropicTools.url}/v1`, adapter: 'anthropic', model: 'sdk-claude-tools', policy: { modelIds: '*' } });
  await settled(relay, (s) => s.relayKeys.has(gptTools.relayKeyId) && s.relayKeys.has(claudeTools.relayKeyId));
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } } } } }];
  for (const model of ['sdk-gpt-tools', 'sdk-claude-tools']) {
    const final = await openai.chat.completions.stream({ model, messages, tools }).finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls?.[0];
    t.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather', `openai chat, ${model}`);
    t.same(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}'), toolCall.input);
    t.equal(final.choices[0]!.finish_reason, 'tool_calls');
  }
  const anthropicToolDefs = [{ name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
  for (const model of ['sdk-claude-tools', 'sdk-gpt-tools']) {
    const final = await anthropic.messages.stream({ model, max_tokens: 64, messages, tools: anthropicToolDefs }).finalMessage();
    const use = final.content.find((b) => b.type === 'tool_use');
    t.match(use, { type: 'tool_use', name: 'get_weather', input: toolCall.input }, `anthropic messages, ${model}`);
    t.equal(final.stop_reason, 'tool_use');
  }
});
