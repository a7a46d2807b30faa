// examples/vendor-gemini end to end: Relay started from the example's own config file (which
// loads the adapter by path, beside the built-ins), a fake Gemini upstream over real HTTP and
// SSE, and the official OpenAI and Anthropic SDKs as clients. Nothing in core/ or plugins/
// knows Gemini: both client shapes reach it through the canonical shape.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeGemini } from '../../examples/vendor-gemini/test/fake-gemini.ts';
import { settled, usageRecord } from '../support/relay-client.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TEXT = 'Gemini says hello through Relay.';
const HOST_KEY = 'AIza-fake-host-key';

const gemini = await startFakeGemini({
  apiKey: HOST_KEY, text: TEXT, chunks: 5,
  usage: { promptTokenCount: 11, candidatesTokenCount: 6, thoughtsTokenCount: 4, cachedContentTokenCount: 3 },
  functionCall: { name: 'get_weather', args: { city: 'Paris' } },
});
const relay = await startRelay({ configFile: path.join(root, 'examples/vendor-gemini/relay.yaml') });
t.teardown(async () => {
  await relay.close();
  await gemini.close();
});

const seeded = await seedRoute(relay, {
  baseUrl: `${gemini.url}/v1beta`, adapter: 'gemini', model: 'gemini-flash', upstreamModel: 'models/gemini-2.5-flash', hostKeys: [HOST_KEY],
});
await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.hostKeysOfHost(seeded.hostId).length > 0);

const openai = new OpenAI({ apiKey: seeded.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: seeded.relayKey, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });

t.test('the plugin was loaded by path from the config file', async (t) => {
  const loaded = relay.relay.plugins.find((p) => p.plugin.name === 'vendor-gemini');
  t.ok(loaded, 'vendor-gemini is loaded');
  t.equal(loaded!.source, path.join(root, 'examples/vendor-gemini/index.ts'));
});

t.test('a streamed OpenAI chat completion is served by Gemini', async (t) => {
  const { data: stream, response } = await openai.chat.completions.create({
    model: 'gemini-flash', stream: true, stream_options: { include_usage: true }, max_tokens: 200, temperature: 0.5,
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
  t.equal(text, TEXT, 'the text of every SSE frame, in order');
  t.equal(finish, 'stop');
  t.equal(usage?.prompt_tokens, 11);
  t.equal(usage?.completion_tokens, 10, 'candidates + thoughts');

  const sent = gemini.requests[gemini.requests.length - 1]!;
  t.equal(sent.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
  t.equal(sent.query.get('alt'), 'sse');
  t.equal(sent.headers['x-goog-api-key'], HOST_KEY, 'the host key, in x-goog-api-key');
  t.notOk(sent.headers.authorization, 'the relay key does not go upstream');
  t.same(sent.json.systemInstruction, { parts: [{ text: 'Be brief.' }] });
  t.same(sent.json.contents, [{ role: 'user', parts: [{ text: 'Say hello.' }] }]);
  t.same(sent.json.generationConfig, { maxOutputTokens: 200, temperature: 0.5 });

  const record = await usageRecord(relay, response.headers.get('x-request-id')!);
  t.match(record, { status: 200, upstream_shape: 'gemini.generate', inbound_shape: 'openai.chat', input_tokens: 11, output_tokens: 10, reasoning_tokens: 4, cache_read_tokens: 3 });
});

t.test('an Anthropic Messages request is served by Gemini, JSON and streamed', async (t) => {
  const message = await anthropic.messages.create({ model: 'gemini-flash', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] });
  t.equal(message.content[0]?.type === 'text' ? message.content[0].text : null, TEXT);
  t.equal(message.stop_reason, 'end_turn');
  t.equal(gemini.requests[gemini.requests.length - 1]!.method, 'generateContent');

  const final = await anthropic.messages.stream({ model: 'gemini-flash', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] }).finalMessage();
  t.equal(final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), TEXT, 'the SDK stream helper accepts the event sequence');
  t.equal(final.usage.output_tokens, 10);
});

t.test('a tool call round trip: functionCall out, functionResponse back by name', async (t) => {
  const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  const first = await openai.chat.completions.create({ model: 'gemini-flash', messages, tools });
  const call = first.choices[0]!.message.tool_calls?.[0];
  t.equal(first.choices[0]!.finish_reason, 'tool_calls');
  t.equal(call?.type === 'function' ? call.function.name : null, 'get_weather');
  t.same(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}'), { city: 'Paris' });
  t.same(gemini.requests[gemini.requests.length - 1]!.json.tools[0].functionDeclarations[0].name, 'get_weather');

  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: '{"temperature": 21}' });
  const second = await openai.chat.completions.create({ model: 'gemini-flash', messages, tools });
  t.equal(second.choices[0]!.message.content, TEXT);
  const contents = gemini.requests[gemini.requests.length - 1]!.json.contents;
  t.same(contents[1], { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] });
  t.same(contents[2], { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21 } } }] });
});

t.test("a Gemini error reaches the client in the client's shape", async (t) => {
  gemini.enqueue({ status: 400, body: gemini.error(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.') });
  const err = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  t.ok(err instanceof OpenAI.BadRequestError, 'a typed 400 in the OpenAI SDK');
  t.match((err as InstanceType<typeof OpenAI.BadRequestError>).message, /Request contains an invalid argument/);
});
