// Every adapter whose upstream answers in the Messages shape (Anthropic, Claude on Bedrock through
// InvokeModel, Claude on Vertex AI) reads the same usage from a whole answer and from a stream:
// 1-hour cache writes, web searches and thinking tokens included, since each is priced apart. And
// the Messages encoders write the same members back, so a translated Messages client's own
// accounting sees them.
import t from 'tap';
import { usageFromMessages, usageToMessages, type Usage } from '../../core/plugin-api/canonical.ts';
import type { VendorAdapter } from '../../core/plugin-api.ts';
import { createAnthropicAdapter } from '../../plugins/vendor-anthropic/adapter.ts';
import { createBedrockAdapter } from '../../plugins/vendor-bedrock/adapter.ts';
import { VertexTokens } from '../../plugins/vendor-google/access-token.ts';
import { createVertexAnthropicAdapter } from '../../plugins/vendor-google/vertex-anthropic.ts';

const adapters: Array<[string, VendorAdapter]> = [
  ['Anthropic', createAnthropicAdapter('anthropic', '2023-06-01')],
  ['Claude on Bedrock', createBedrockAdapter('bedrock')],
  ['Claude on Vertex AI', createVertexAnthropicAdapter('vertex-anthropic', new VertexTokens(), false)],
];

const WHOLE = {
  input_tokens: 10, output_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 50,
  cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30 },
  output_tokens_details: { thinking_tokens: 12 },
  server_tool_use: { web_search_requests: 2 },
};
const EXPECTED: Usage = {
  input_tokens: 160, output_tokens: 40, cache_read_tokens: 100, cache_write_tokens: 50, cache_write_1h_tokens: 30,
  reasoning_tokens: 12, web_search_requests: 2,
};

for (const [name, adapter] of adapters) {
  t.test(`${name}: a whole answer's usage`, async (t) => {
    t.same(adapter.usageFromBody('anthropic.messages', { usage: WHOLE }), EXPECTED);
  });

  t.test(`${name}: a stream's usage, message_start's counts overwritten by message_delta's`, async (t) => {
    const inspector = adapter.streamInspector('anthropic.messages');
    const start = { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 100, cache_creation_input_tokens: 50, cache_creation: WHOLE.cache_creation };
    t.equal(inspector.inspect('message_start', JSON.stringify({ type: 'message_start', message: { usage: start } })), 'opening');
    t.equal(inspector.inspect('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}'), 'output');
    const delta = { output_tokens: 40, output_tokens_details: WHOLE.output_tokens_details, server_tool_use: WHOLE.server_tool_use };
    inspector.inspect('message_delta', JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: delta }));
    t.same(inspector.usage(), EXPECTED);
  });
}

// Claude's classifiers: a refusal before any output is not billed; one after output is. With the
// `fallbacks` parameter a refused request is re-served by another model, which the answer names.
const REFUSAL_USAGE = { input_tokens: 106, output_tokens: 1 };
const PLAIN_REFUSAL: Usage = { input_tokens: 106, output_tokens: 1, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
const streamOf = (inspector: ReturnType<VendorAdapter['streamInspector']>, frames: Array<Record<string, unknown>>) => {
  for (const frame of frames) inspector.inspect(String(frame.type), JSON.stringify(frame));
  return inspector.usage();
};
const started = (model: string) => ({ type: 'message_start', message: { model, usage: { input_tokens: 106, output_tokens: 0 } } });
const refused = { type: 'message_delta', delta: { stop_reason: 'refusal' }, usage: { output_tokens: 1 } };
const block = { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } };

for (const [name, adapter] of adapters) {
  t.test(`${name}: a refusal before any output is unbilled, one after output is billed; the answering model is read`, async (t) => {
    const whole = (answer: Record<string, unknown>) => adapter.usageFromBody('anthropic.messages', { usage: REFUSAL_USAGE, ...answer });
    t.same(whole({ model: 'claude-fable-5', content: [], stop_reason: 'refusal' }), { ...PLAIN_REFUSAL, model: 'claude-fable-5', unbilled: 'refusal' });
    t.same(whole({ model: 'claude-fable-5', content: [{ type: 'text', text: 'Hello..' }], stop_reason: 'refusal' }), { ...PLAIN_REFUSAL, model: 'claude-fable-5' }, 'refused after output');
    t.same(whole({ model: 'claude-opus-4-8', content: [{ type: 'text', text: 'Hi' }], stop_reason: 'end_turn' }), { ...PLAIN_REFUSAL, model: 'claude-opus-4-8' }, 'another model answered');
    t.same(whole({ model: 'x'.repeat(257), content: [], stop_reason: 'end_turn' }), PLAIN_REFUSAL, 'a name past 256 characters is not taken');

    t.same(streamOf(adapter.streamInspector('anthropic.messages'), [started('claude-fable-5'), refused, { type: 'message_stop' }]),
      { ...PLAIN_REFUSAL, model: 'claude-fable-5', unbilled: 'refusal' }, 'streamed, before any block');
    t.same(streamOf(adapter.streamInspector('anthropic.messages'), [started('claude-opus-4-8'), block, refused, { type: 'message_stop' }]),
      { ...PLAIN_REFUSAL, model: 'claude-opus-4-8' }, 'streamed, after a block');
  });
}

t.test('the Messages encoders write back what the decoders read', async (t) => {
  const written = usageToMessages(EXPECTED);
  t.same(written, WHOLE, 'the 5-minute and 1-hour split, thinking tokens and searches');
  t.same(usageFromMessages(written), EXPECTED);
  const plain: Usage = { input_tokens: 7, output_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
  t.same(usageToMessages(plain), { input_tokens: 7, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, 'no empty members');
});
