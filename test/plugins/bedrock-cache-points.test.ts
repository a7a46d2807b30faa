// Converse requests to Claude carry cache points (after the tools, the system prompt, the last
// message and the user message before it), since every client of Converse is translated and sends none. Models that take no cache
// point (other vendors' models, Claude before 3.7 Sonnet and 3.5 Haiku) get none, and neither does
// a Bedrock adapter made with cacheTranslated: false.
import t from 'tap';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import { createBedrockAdapter } from '../../plugins/vendor-bedrock/adapter.ts';
import { fakeRoute } from '../support/fake-route.ts';

const POINT = { cachePoint: { type: 'default' } };
const request: CanonicalRequest = {
  model: 'm',
  system: [{ type: 'text', text: 'You are a coding agent.' }],
  tools: [{ type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'List the files.' }] },
    { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'shell', arguments: '{}' }] },
    { role: 'tool', content: [{ type: 'tool_result', tool_call_id: 'call_1', content: [{ type: 'text', text: 'README.md' }] }] },
  ],
} as CanonicalRequest;

const adapter = createBedrockAdapter('bedrock');
const encode = (model: string, a = adapter) => a.encodeRequest('bedrock.converse', structuredClone(request), fakeRoute(model)) as Record<string, any>;

/** Where the cache points sit: after which block of tools, system and each message. */
function points(body: Record<string, any>): string[] {
  const at = (list: unknown[] | undefined, name: string) => (list ?? []).flatMap((b: any, i) => (b.cachePoint ? [`${name}[${i}]`] : []));
  return [...at(body.toolConfig?.tools, 'tools'), ...at(body.system, 'system'), ...body.messages.flatMap((m: any, i: number) => at(m.content, `messages[${i}]`))];
}

t.test('Claude: after the tools, the system prompt, the last message and the user message before it', async (t) => {
  for (const model of ['anthropic.claude-sonnet-4-5-20250929-v1:0', 'us.anthropic.claude-opus-4-1-20250805-v1:0', 'anthropic.claude-3-7-sonnet-20250219-v1:0', 'anthropic.claude-3-5-haiku-20241022-v1:0']) {
    const body = encode(model);
    t.same(points(body), ['tools[1]', 'system[1]', 'messages[0][1]', `messages[${body.messages.length - 1}][1]`], model);
    t.same(body.system.at(-1), POINT);
  }
});

t.test('no cache points for models that take none, nor with cacheTranslated: false', async (t) => {
  for (const model of ['meta.llama3-70b-instruct-v1:0', 'amazon.titan-text-express-v1', 'anthropic.claude-3-haiku-20240307-v1:0', 'anthropic.claude-3-5-sonnet-20241022-v2:0', 'anthropic.claude-v2:1']) {
    t.same(points(encode(model)), [], model);
  }
  t.same(points(encode('anthropic.claude-sonnet-4-5-20250929-v1:0', createBedrockAdapter('bedrock', { cacheTranslated: false }))), []);
});
