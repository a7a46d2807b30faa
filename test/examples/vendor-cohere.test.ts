// examples/vendor-cohere end to end: Relay started from the example's own config file (which
// loads the adapter by path, beside the built-ins), a fake Cohere upstream over real HTTP and
// SSE, and the official OpenAI and Anthropic SDKs as clients. Nothing in core/ or plugins/
// knows Cohere: both client shapes reach it through the canonical shape.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeCohere } from '../../examples/vendor-cohere/test/fake-cohere.ts';
import { routeLive, usageRecord } from '../support/relay-client.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TEXT = 'Cohere says hello through Relay.';
const HOST_KEY = 'co-fake-host-key';

const cohere = await startFakeCohere({ apiKey: HOST_KEY, text: TEXT, chunks: 5, usage: { input: 11, output: 6, cached: 3 }, toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } });
const relay = await startRelay({ configFile: path.join(root, 'examples/vendor-cohere/relay.yaml') });
t.teardown(async () => {
  await relay.close();
  await cohere.close();
});

const seeded = await seedRoute(relay, { baseUrl: `${cohere.url}/v2`, adapter: 'cohere', model: 'command', upstreamModel: 'command-a-03-2025', hostKeys: [HOST_KEY] });
await routeLive(relay, seeded);

const openai = new OpenAI({ apiKey: seeded.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: seeded.relayKey, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
const last = () => cohere.requests[cohere.requests.length - 1]!;

t.test('the plugin was loaded by path from the config file', async (t) => {
  const loaded = relay.relay.plugins.find((p) => p.plugin.name === 'vendor-cohere');
  t.equal(loaded?.source, path.join(root, 'examples/vendor-cohere/index.ts'));
});

t.test('a streamed OpenAI chat completion is served by Cohere', async (t) => {
  const { data: stream, response } = await openai.chat.completions.create({
    model: 'command', stream: true, stream_options: { include_usage: true }, max_tokens: 200, temperature: 0.5,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }],
  }).withResponse();
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    usage = chunk.usage ?? usage;
  }
  t.equal(text, TEXT);
  t.equal(finish, 'stop');
  t.equal(usage?.prompt_tokens, 11);
  const sent = last();
  t.equal(sent.headers.authorization, `Bearer ${HOST_KEY}`, 'the host key, not the relay key');
  t.same(sent.json, {
    model: 'command-a-03-2025', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }], max_tokens: 200, temperature: 0.5, stream: true,
  });
  const record = await usageRecord(relay, response.headers.get('x-request-id')!);
  t.match(record, { status: 200, upstream_shape: 'cohere.chat', inbound_shape: 'openai.chat', input_tokens: 11, output_tokens: 6, cache_read_tokens: 3 });
});

t.test('an Anthropic Messages request is served by Cohere, JSON and streamed', async (t) => {
  const message = await anthropic.messages.create({ model: 'command', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] });
  t.equal(message.content[0]?.type === 'text' ? message.content[0].text : null, TEXT);
  t.equal(message.stop_reason, 'end_turn');
  const final = await anthropic.messages.stream({ model: 'command', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }).finalMessage();
  t.equal(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), TEXT, 'the SDK stream helper accepts the event sequence');
});

t.test('a streamed tool call round trip through Cohere', async (t) => {
  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const stream = await openai.chat.completions.create({ model: 'command', messages, tools, stream: true });
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for await (const chunk of stream) {
    for (const d of chunk.choices[0]?.delta.tool_calls ?? []) {
      const c = calls.get(d.index) ?? { id: '', name: '', args: '' };
      c.id ||= d.id ?? '';
      c.name ||= d.function?.name ?? '';
      c.args += d.function?.arguments ?? '';
      calls.set(d.index, c);
    }
  }
  const call = calls.get(0)!;
  t.equal(call.name, 'get_weather');
  t.same(JSON.parse(call.args), { city: 'Paris' }, 'arguments streamed in pieces, reassembled');
  messages.push({ role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] }, { role: 'tool', tool_call_id: call.id, content: '21 degrees' });
  const second = await openai.chat.completions.create({ model: 'command', messages, tools });
  t.equal(second.choices[0]!.message.content, TEXT);
  t.same(last().json.messages.slice(1), [
    { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: call.args } }] },
    { role: 'tool', tool_call_id: call.id, content: '21 degrees' },
  ], "Cohere's own call id goes back with the result");
});

t.test("a Cohere error reaches the client in the client's shape", async (t) => {
  cohere.enqueue({ status: 429, body: { message: 'You are using a Trial key, which is limited to 10 API calls / minute.' } });
  const err = await openai.chat.completions.create({ model: 'command', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.RateLimitError, 'a typed 429 in the OpenAI SDK');
  t.match((err as Error).message, /Trial key/);
});
