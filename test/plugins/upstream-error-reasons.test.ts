// Each vendor adapter's error classifier names the reasons a model fallback may take (issue 42):
// a prompt over the context window and a content-filter refusal, from the vendor's own wording.
import t from 'tap';
import { decodeOpenAIError } from '../../plugins/vendor-openai/codec/errors.ts';
import { decodeAnthropicError } from '../../plugins/vendor-anthropic/codec/errors.ts';
import { decodeBedrockError } from '../../plugins/vendor-bedrock/codec/errors.ts';
import { decodeGeminiError } from '../../plugins/vendor-google/codec/errors.ts';
import { decodeMessagesError } from '../../plugins/vendor-google/messages-errors.ts';

const openaiBody = (code: string | null, message: string) => JSON.stringify({ error: { message, type: 'invalid_request_error', param: 'messages', code } });

t.test('OpenAI: context_length_exceeded, content_filter, and neither', async (t) => {
  t.equal(decodeOpenAIError(400, openaiBody('context_length_exceeded', "This model's maximum context length is 128000 tokens.")).reason, 'context_window_exceeded');
  t.equal(decodeOpenAIError(400, openaiBody('content_filter', 'The response was filtered')).reason, 'content_filter');
  t.equal(decodeOpenAIError(400, openaiBody('content_policy_violation', 'Your request was rejected')).reason, 'content_filter');
  // vLLM and other compatible servers say it only in words.
  t.equal(decodeOpenAIError(400, JSON.stringify({ object: 'error', message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens." })).reason, 'context_window_exceeded');
  t.equal(decodeOpenAIError(400, openaiBody('invalid_value', 'temperature must be at most 2')).reason, undefined);
  t.equal(decodeOpenAIError(500, openaiBody('context_length_exceeded', 'x')).reason, undefined, 'a 5xx is a server error, never a refusal');
  t.equal(decodeOpenAIError(429, openaiBody('rate_limit_exceeded', 'too many tokens per min')).reason, undefined);
});

t.test("Anthropic: 'prompt is too long' invalid_request_error", async (t) => {
  const body = (message: string) => JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } });
  t.equal(decodeAnthropicError(400, body('prompt is too long: 210345 tokens > 200000 maximum')).reason, 'context_window_exceeded');
  t.equal(decodeAnthropicError(400, body('input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000')).reason, 'context_window_exceeded');
  t.equal(decodeAnthropicError(400, body('messages: roles must alternate')).reason, undefined);
  t.equal(decodeAnthropicError(529, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })).reason, undefined);
});

t.test('Bedrock: a ValidationException over the window, a guardrail refusal', async (t) => {
  t.equal(decodeBedrockError(400, JSON.stringify({ message: 'Input is too long for requested model.' })).reason, 'context_window_exceeded');
  t.equal(decodeBedrockError(400, JSON.stringify({ message: 'prompt is too long: 210000 tokens > 200000 maximum' })).reason, 'context_window_exceeded');
  t.equal(decodeBedrockError(400, JSON.stringify({ message: 'The request was blocked by a guardrail.' })).reason, 'content_filter');
  t.equal(decodeBedrockError(400, JSON.stringify({ message: 'Malformed input request' })).reason, undefined);
});

t.test('Gemini and Claude on Vertex', async (t) => {
  const gemini = JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).' } });
  t.equal(decodeGeminiError(400, gemini).reason, 'context_window_exceeded');
  t.equal(decodeGeminiError(400, JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Invalid JSON payload' } })).reason, undefined);
  t.equal(decodeMessagesError(400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210345 tokens > 200000 maximum' } })).reason, 'context_window_exceeded');
  t.equal(decodeMessagesError(400, gemini).reason, 'context_window_exceeded');
});
