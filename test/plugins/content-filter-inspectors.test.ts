// Each vendor's stream inspector calls a content-filter stop before any output `content_filter`
// (a fallback taking content_filter may then answer), and the same stop after output `output`.
import t from 'tap';
import { chatStreamInspector } from '../../plugins/vendor-openai/codec/chat-inspector.ts';
import { responsesStreamInspector } from '../../plugins/vendor-openai/codec/responses-inspector.ts';
import { messagesStreamInspector } from '../../core/plugin-api/canonical.ts';
import { geminiStreamInspector } from '../../plugins/vendor-google/codec/inspector.ts';
import { VertexTokens } from '../../plugins/vendor-google/access-token.ts';
import { createVertexAnthropicAdapter } from '../../plugins/vendor-google/vertex-anthropic.ts';

const vertexMessagesInspector = () => createVertexAnthropicAdapter('vertex-anthropic', new VertexTokens(), false).streamInspector('anthropic.messages');

const chat = (delta: object, finish: string | null = null) => JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] });

t.test('OpenAI Chat', async (t) => {
  const early = chatStreamInspector();
  t.equal(early.inspect(undefined, chat({ role: 'assistant', content: '' })), 'opening');
  t.equal(early.inspect(undefined, chat({}, 'content_filter')), 'content_filter');
  const late = chatStreamInspector();
  t.equal(late.inspect(undefined, chat({ content: 'Hi' })), 'output');
  t.equal(late.inspect(undefined, chat({}, 'content_filter')), 'output', 'after output it is the end of an answer');
  t.equal(chatStreamInspector().inspect(undefined, chat({}, 'stop')), 'output', 'another finish_reason is output, as before');
});

t.test('OpenAI Responses', async (t) => {
  const frame = (type: string, response: object) => JSON.stringify({ type, response });
  const early = responsesStreamInspector();
  t.equal(early.inspect('response.created', frame('response.created', { status: 'in_progress' })), 'opening');
  t.equal(early.inspect('response.incomplete', frame('response.incomplete', { status: 'incomplete', incomplete_details: { reason: 'content_filter' } })), 'content_filter');
  t.equal(responsesStreamInspector().inspect('response.failed', frame('response.failed', { status: 'failed', error: { code: 'content_filter', message: 'filtered' } })), 'content_filter');
  t.equal(responsesStreamInspector().inspect('response.failed', frame('response.failed', { status: 'failed', error: { code: 'server_error', message: 'x' } })), 'error', 'another failure is an error, as before');
  t.equal(responsesStreamInspector().inspect('response.incomplete', frame('response.incomplete', { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })), 'output');
  const late = responsesStreamInspector();
  t.equal(late.inspect('response.output_text.delta', '{"type":"response.output_text.delta","delta":"Hi"}'), 'output');
  t.equal(late.inspect('response.incomplete', frame('response.incomplete', { status: 'incomplete', incomplete_details: { reason: 'content_filter' } })), 'output');
});

t.test('Anthropic Messages', async (t) => {
  const delta = JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'refusal' }, usage: { output_tokens: 1 } });
  const early = messagesStreamInspector();
  t.equal(early.inspect('message_start', JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 3 } } })), 'opening');
  t.equal(early.inspect('message_delta', delta), 'content_filter');
  const late = messagesStreamInspector();
  t.equal(late.inspect('content_block_delta', '{}'), 'output');
  t.equal(late.inspect('message_delta', delta), 'output');
  const vertex = vertexMessagesInspector();
  t.equal(vertex.inspect('message_start', JSON.stringify({ type: 'message_start', message: { usage: { input_tokens: 3 } } })), 'opening');
  t.equal(vertex.inspect('message_delta', delta), 'content_filter', 'Claude on Vertex AI too');
  const vertexLate = vertexMessagesInspector();
  t.equal(vertexLate.inspect('content_block_start', '{}'), 'output');
  t.equal(vertexLate.inspect('message_delta', delta), 'output');
});

t.test('Gemini', async (t) => {
  const g = geminiStreamInspector();
  t.equal(g.inspect(undefined, JSON.stringify({ candidates: [{ finishReason: 'SAFETY', safetyRatings: [] }] })), 'content_filter');
  t.equal(geminiStreamInspector().inspect(undefined, JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } })), 'content_filter');
  t.equal(geminiStreamInspector().inspect(undefined, JSON.stringify({ usageMetadata: { promptTokenCount: 3 } })), 'opening');
  t.equal(geminiStreamInspector().inspect(undefined, JSON.stringify({ candidates: [{ content: { parts: [{ text: 'Hi' }] }, finishReason: 'SAFETY' }] })), 'output', 'text came with it');
});
