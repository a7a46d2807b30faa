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

t.test('the Messages encoders write back what the decoders read', async (t) => {
  const written = usageToMessages(EXPECTED);
  t.same(written, WHOLE, 'the 5-minute and 1-hour split, thinking tokens and searches');
  t.same(usageFromMessages(written), EXPECTED);
  const plain: Usage = { input_tokens: 7, output_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
  t.same(usageToMessages(plain), { input_tokens: 7, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, 'no empty members');
});
