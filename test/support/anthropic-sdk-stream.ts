// Feeds SSE text to the official @anthropic-ai/sdk stream helper, as if an Anthropic endpoint
// had answered with it, and returns finalMessage(): the SDK rejects malformed event sequences.
import Anthropic from '@anthropic-ai/sdk';

export async function sdkFinalMessage(sse: string): Promise<Anthropic.Message> {
  const client = new Anthropic({
    apiKey: 'test-key',
    baseURL: 'http://relay.test',
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  return client.messages.stream({ model: 'test-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
}
