// The benchmark cases: what a client sends, what the upstream is asked when there is no gateway
// (the "direct" baseline), and how to tell a complete, successful answer.
import { claudeCodeBody, codexBody } from './agent-bodies.ts';

export type Vendor = 'openai' | 'anthropic';
export type Shape = 'chat' | 'responses' | 'embeddings' | 'messages';

/** Model slugs used by every target; the Relay catalog seeded for the bench must carry them. */
export const BENCH_MODELS = {
  /** An OpenAI-shaped chat model on the fake OpenAI host. */
  openai: 'bench-gpt',
  /** An Anthropic model on the fake Anthropic host. */
  anthropic: 'bench-claude',
  /** An embeddings model on the fake OpenAI host. */
  embeddings: 'bench-embed',
} as const;

/** Upstream credentials that the targets present to the fake upstream. */
export const UPSTREAM_KEYS = { openai: 'sk-bench-upstream', anthropic: 'sk-ant-bench-upstream' } as const;

export interface BenchCase {
  id: string;
  title: string;
  stream: boolean;
  /** The request a client sends to a gateway: inbound wire shape, body, and the upstream's vendor. */
  client: { shape: Shape; vendor: Vendor; body: object; expect: string };
  /** The same work asked of the upstream directly (what the gateway itself would send upstream). */
  direct: { path: string; vendor: Vendor; body: object; expect: string };
}

const userMsg = [{ role: 'user', content: 'Say hello in a few words.' }];

const chatBody = { model: BENCH_MODELS.openai, messages: userMsg, max_tokens: 64 };
const chatStreamBody = { ...chatBody, stream: true, stream_options: { include_usage: true } };
const messagesStreamBody = { model: BENCH_MODELS.anthropic, max_tokens: 64, messages: userMsg, stream: true };
const embeddingsBody = { model: BENCH_MODELS.embeddings, input: 'The quick brown fox jumps over the lazy dog.', encoding_format: 'float' };
// A coding agent's turn deep into a session, as Claude Code sends it (agent-bodies.ts): what a
// gateway in front of agents mostly reads.
const agentTurnBody = JSON.parse(claudeCodeBody(400_000, BENCH_MODELS.anthropic).toString('utf8')) as object;
// Codex's turn of the same size, to a Messages upstream: translated both ways.
const codexTurnBody = JSON.parse(codexBody(400_000, BENCH_MODELS.anthropic).toString('utf8')) as object;
// A real model's size (text-embedding-3-small): a ~30 KB answer instead of the 8-dimension one.
const embeddings1536Body = { ...embeddingsBody, dimensions: 1536 };

export const CASES: BenchCase[] = [
  {
    id: 'chat',
    title: 'chat completions, non-streaming passthrough',
    stream: false,
    client: { shape: 'chat', vendor: 'openai', body: chatBody, expect: '"chat.completion"' },
    direct: { path: '/v1/chat/completions', vendor: 'openai', body: chatBody, expect: '"chat.completion"' },
  },
  {
    id: 'chat-stream',
    title: 'chat completions, streaming passthrough (20 chunks)',
    stream: true,
    client: { shape: 'chat', vendor: 'openai', body: chatStreamBody, expect: 'data: [DONE]' },
    direct: { path: '/v1/chat/completions', vendor: 'openai', body: chatStreamBody, expect: 'data: [DONE]' },
  },
  {
    id: 'messages-stream',
    title: 'anthropic messages, streaming passthrough (20 chunks)',
    stream: true,
    client: { shape: 'messages', vendor: 'anthropic', body: messagesStreamBody, expect: 'message_stop' },
    direct: { path: '/v1/messages', vendor: 'anthropic', body: messagesStreamBody, expect: 'message_stop' },
  },
  {
    id: 'responses-to-messages',
    title: 'responses in, anthropic messages upstream, translated stream (20 chunks)',
    stream: true,
    client: {
      shape: 'responses',
      vendor: 'anthropic',
      body: { model: BENCH_MODELS.anthropic, input: 'Say hello in a few words.', max_output_tokens: 64, stream: true },
      expect: 'response.completed',
    },
    // Direct baseline: the upstream stream the gateway consumes while translating.
    direct: { path: '/v1/messages', vendor: 'anthropic', body: messagesStreamBody, expect: 'message_stop' },
  },
  {
    id: 'embeddings',
    title: 'embeddings passthrough',
    stream: false,
    client: { shape: 'embeddings', vendor: 'openai', body: embeddingsBody, expect: '"embedding"' },
    direct: { path: '/v1/embeddings', vendor: 'openai', body: embeddingsBody, expect: '"embedding"' },
  },
  {
    id: 'embeddings-1536',
    title: 'embeddings passthrough, 1536 dimensions (a ~30 KB answer)',
    stream: false,
    client: { shape: 'embeddings', vendor: 'openai', body: embeddings1536Body, expect: '"embedding"' },
    direct: { path: '/v1/embeddings', vendor: 'openai', body: embeddings1536Body, expect: '"embedding"' },
  },
  // Last: a gateway process runs every case in turn, and 64 of these in flight (~80 MB of request
  // bodies) raise the heap V8 lets grow before its next full collection; run earlier, the RSS of
  // every case after it read 206-217 MB instead of 142-157 (c643d5d, idle CPUs halting).
  {
    id: 'agent-turn-stream',
    title: 'anthropic messages, streaming passthrough of a Claude Code turn (a ~400 KB request, 20 chunks)',
    stream: true,
    client: { shape: 'messages', vendor: 'anthropic', body: agentTurnBody, expect: 'message_stop' },
    direct: { path: '/v1/messages', vendor: 'anthropic', body: agentTurnBody, expect: 'message_stop' },
  },
  {
    id: 'agent-turn-translated',
    title: 'responses in, anthropic messages upstream: a Codex turn (a ~400 KB request, 20 chunks), translated',
    stream: true,
    client: { shape: 'responses', vendor: 'anthropic', body: codexTurnBody, expect: 'response.completed' },
    // Direct baseline: a Messages turn of the same size, as the upstream is asked for one.
    direct: { path: '/v1/messages', vendor: 'anthropic', body: agentTurnBody, expect: 'message_stop' },
  },
];

/** Headers a client of the vendor API sends with its vendor credential. */
export function vendorAuthHeaders(vendor: Vendor): Record<string, string> {
  return vendor === 'anthropic'
    ? { 'x-api-key': UPSTREAM_KEYS.anthropic, 'anthropic-version': '2023-06-01' }
    : { authorization: `Bearer ${UPSTREAM_KEYS.openai}` };
}
