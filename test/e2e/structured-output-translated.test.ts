// Structured output through translation (issue 44 item 6): a JSON schema sent as Responses
// text.format, Chat response_format or Messages output_config.format reaches the other vendor's
// upstream as that vendor's schema field, and the JSON answer arrives where each official SDK reads
// it (output_parsed, message.parsed, parsed_output), streamed and not. A JSON mode an upstream
// cannot carry (json_object into Anthropic) is a 400 naming it, never dropped.
import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { makeParseableResponseFormat, makeParseableTextFormat } from 'openai/lib/parser';
import { startRelay, seedRoute } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled } from '../support/relay-client.ts';

const ANSWER = { city: 'Paris', temperature: 18 };
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, temperature: { type: 'number' } },
  required: ['city', 'temperature'],
  additionalProperties: false,
};
const relay = await startRelay();
const anthropicUp = await startFakeUpstream({ chunks: 4, text: JSON.stringify(ANSWER) });
const openaiUp = await startFakeUpstream({ chunks: 4, text: JSON.stringify(ANSWER) });
t.teardown(async () => {
  await relay.close();
  await anthropicUp.close();
  await openaiUp.close();
});

const claude = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'so-claude', policy: { modelIds: '*' } });
const gpt = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'so-gpt', policy: { modelIds: '*' } });
await settled(relay, (s) => s.relayKeys.has(claude.relayKeyId) && s.relayKeys.has(gpt.relayKeyId) && s.models.size >= 2);

const openai = new OpenAI({ apiKey: claude.relayKey, baseURL: `${relay.inferenceUrl}/vendor-a/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: gpt.relayKey, baseURL: `${relay.inferenceUrl}/vendor-b`, maxRetries: 0 });
const input = 'Weather in Paris as JSON.';

function anthropicGotSchema(t: { same: (a: unknown, b: unknown, m: string) => void }): void {
  const sent = anthropicUp.lastRequest()!.json;
  t.same(sent.output_config, { format: { type: 'json_schema', schema: SCHEMA } }, 'Anthropic got the schema as output_config.format');
}

t.test('Responses text.format json_schema -> Anthropic: output_parsed', async (t) => {
  // What zodTextFormat builds, without zod: the SDK parses streamed answers only for such a format.
  const text = { format: makeParseableTextFormat({ type: 'json_schema', name: 'weather', schema: SCHEMA, strict: true }, (s) => JSON.parse(s) as unknown) };
  const parsed = await openai.responses.parse({ model: 'so-claude', input, text });
  t.same(parsed.output_parsed, ANSWER);
  anthropicGotSchema(t);
  const stream = openai.responses.stream({ model: 'so-claude', input, text });
  const final = await stream.finalResponse();
  t.same(final.output_parsed, ANSWER, 'streamed: the final response is parsed too');
  t.equal(anthropicUp.lastRequest()!.json.stream, true);
  anthropicGotSchema(t);
});

t.test('Chat response_format json_schema -> Anthropic: message.parsed', async (t) => {
  const response_format = makeParseableResponseFormat({ type: 'json_schema', json_schema: { name: 'weather', schema: SCHEMA, strict: true } }, (s) => JSON.parse(s) as unknown);
  const completion = await openai.chat.completions.parse({ model: 'so-claude', messages: [{ role: 'user', content: input }], response_format });
  t.same(completion.choices[0]!.message.parsed, ANSWER);
  anthropicGotSchema(t);
  const stream = openai.chat.completions.stream({ model: 'so-claude', messages: [{ role: 'user', content: input }], response_format });
  const final = await stream.finalChatCompletion();
  t.same(final.choices[0]!.message.parsed, ANSWER, 'streamed');
  anthropicGotSchema(t);
});

t.test('Messages output_config.format -> OpenAI: parsed_output, and the schema as OpenAI\'s', async (t) => {
  const output_config = { format: { type: 'json_schema' as const, schema: SCHEMA, parse: (s: string) => JSON.parse(s) as unknown } };
  const message = await anthropic.messages.parse({ model: 'so-gpt', max_tokens: 200, messages: [{ role: 'user', content: input }], output_config });
  t.same(message.parsed_output, ANSWER);
  const sent = openaiUp.lastRequest()!;
  const schemaSent = sent.pathname === '/v1/chat/completions' ? sent.json.response_format?.json_schema?.schema : sent.json.text?.format?.schema;
  t.same(schemaSent, SCHEMA, `OpenAI got the schema (${sent.pathname})`);
  const stream = anthropic.messages.stream({ model: 'so-gpt', max_tokens: 200, messages: [{ role: 'user', content: input }], output_config });
  const final = await stream.finalMessage();
  t.same((final as { parsed_output?: unknown }).parsed_output, ANSWER, 'streamed');
});

t.test('the structured-outputs beta\'s top-level output_format is mapped as well', async (t) => {
  const res = await fetch(`${relay.inferenceUrl}/vendor-b/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': gpt.relayKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'so-gpt', max_tokens: 100, output_format: { type: 'json_schema', schema: SCHEMA }, messages: [{ role: 'user', content: input }] }),
  });
  t.equal(res.status, 200);
  const sent = openaiUp.lastRequest()!.json;
  t.same(sent.response_format?.json_schema?.schema ?? sent.text?.format?.schema, SCHEMA);
});

t.test('json_object into Anthropic is a 400 naming it, not a silent drop', async (t) => {
  const before = anthropicUp.count;
  await t.rejects(openai.chat.completions.create({ model: 'so-claude', messages: [{ role: 'user', content: input }], response_format: { type: 'json_object' } }),
    { status: 400, code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /so-claude.*json_object/ });
  await t.rejects(openai.responses.create({ model: 'so-claude', input, text: { format: { type: 'json_object' } } }),
    { status: 400, code: 'RELAY_ERR_CONTENT_UNSUPPORTED' });
  t.equal(anthropicUp.count, before, 'nothing reached the upstream');
});
