// Fake OpenAI-compatible servers that answer Chat Completions as each one does where they
// differ from OpenAI (the presets in admin-ui/src/catalog/presets.ts):
//   OpenRouter  keep-alive SSE comments (": OPENROUTER PROCESSING") before the first chunk, a
//               `provider` field, usage with `cost`; reasoning in `reasoning`
//   Groq        streamed usage in the last chunk's `x_groq.usage` (no top-level usage);
//               timing fields in usage
//   Mistral     streamed usage in the last chunk (with finish_reason), whether asked or not
//   DeepSeek    cache hits as prompt_cache_hit_tokens / prompt_cache_miss_tokens;
//               reasoning_content (deepseek-reasoner)
//   Together,   streamed usage in the last chunk (with finish_reason)
//   Fireworks
//   vLLM        reasoning_content in the message and in deltas
//   Ollama,     OpenAI's wire (usage only when asked), any key
//   LM Studio
import type { RecordedRequest, ScriptedAction } from './fake-upstream.ts';

export type CompatibleVendor = 'openrouter' | 'groq' | 'mistral' | 'deepseek' | 'together' | 'fireworks' | 'vllm' | 'ollama' | 'lm-studio';

export const ANSWER_TEXT = 'Hello from a compatible server.';
export const REASONING_TEXT = 'The user wants a greeting.';
/** The usage each fake reports: 30 prompt tokens (10 from the cache where the server reports it), 8 completion tokens. */
export const PROMPT = 30;
export const COMPLETION = 8;
export const CACHED: Record<CompatibleVendor, number> = {
  openrouter: 10, groq: 0, mistral: 0, deepseek: 10, together: 0, fireworks: 0, vllm: 0, ollama: 0, 'lm-studio': 0,
};

const REASONS_IN: Partial<Record<CompatibleVendor, 'reasoning' | 'reasoning_content'>> = { openrouter: 'reasoning', deepseek: 'reasoning_content', vllm: 'reasoning_content' };
const USAGE_IN_LAST_CHUNK = new Set<CompatibleVendor>(['mistral', 'together', 'fireworks']);

function usage(vendor: CompatibleVendor): Record<string, unknown> {
  const base = { prompt_tokens: PROMPT, completion_tokens: COMPLETION, total_tokens: PROMPT + COMPLETION };
  switch (vendor) {
    case 'openrouter': return { ...base, prompt_tokens_details: { cached_tokens: CACHED.openrouter }, cost: 0.000042, is_byok: false };
    case 'groq': return { ...base, queue_time: 0.02, prompt_time: 0.004, completion_time: 0.03, total_time: 0.034 };
    case 'deepseek': return { ...base, prompt_cache_hit_tokens: CACHED.deepseek, prompt_cache_miss_tokens: PROMPT - CACHED.deepseek };
    default: return base;
  }
}

function completion(vendor: CompatibleVendor, model: string): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: ANSWER_TEXT };
  const reasons = REASONS_IN[vendor];
  if (reasons) message[reasons] = REASONING_TEXT;
  return {
    id: `gen-${vendor}-1`, object: 'chat.completion', created: 1767225600, model,
    ...(vendor === 'openrouter' ? { provider: 'Anthropic' } : {}),
    ...(vendor === 'groq' ? { x_groq: { id: 'req_01groq' } } : {}),
    choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }],
    usage: usage(vendor),
  };
}

function chunks(vendor: CompatibleVendor, model: string, includeUsage: boolean): string[] {
  const base = { id: `gen-${vendor}-1`, object: 'chat.completion.chunk', created: 1767225600, model };
  const frame = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
  const out: string[] = [];
  if (vendor === 'openrouter') out.push(': OPENROUTER PROCESSING\n\n', ': OPENROUTER PROCESSING\n\n');
  out.push(frame({ role: 'assistant', content: '' }));
  const reasons = REASONS_IN[vendor];
  if (reasons) for (const piece of ['The user wants ', 'a greeting.']) out.push(frame({ [reasons]: piece }));
  for (const piece of ['Hello from ', 'a compatible ', 'server.']) out.push(frame({ content: piece }));
  if (vendor === 'groq') out.push(frame({}, 'stop', { x_groq: { id: 'req_01groq', usage: usage(vendor) } }));
  else if (USAGE_IN_LAST_CHUNK.has(vendor)) out.push(frame({}, 'stop', { usage: usage(vendor) }));
  else {
    out.push(frame({}, 'stop'));
    if (includeUsage) out.push(`data: ${JSON.stringify({ ...base, choices: [], usage: usage(vendor) })}\n\n`);
  }
  out.push('data: [DONE]\n\n');
  return out;
}

function embeddings(model: string, inputs: number): Record<string, unknown> {
  return {
    object: 'list', model,
    data: Array.from({ length: inputs }, (_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
    usage: { prompt_tokens: 4 * inputs, total_tokens: 4 * inputs },
  };
}

/** A script for startFakeUpstream: `basePath` is the preset's path (e.g. /openai/v1 for Groq). */
export function compatibleScript(vendor: CompatibleVendor, basePath: string): (req: RecordedRequest) => ScriptedAction {
  return (req) => {
    const body = (req.json ?? {}) as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean }; input?: unknown };
    const model = String(body.model ?? '');
    if (req.pathname === `${basePath}/chat/completions`) {
      if (body.stream === true) {
        return { headers: { 'content-type': 'text/event-stream' }, frames: chunks(vendor, model, body.stream_options?.include_usage === true) };
      }
      return { body: completion(vendor, model) };
    }
    if (req.pathname === `${basePath}/embeddings`) return { body: embeddings(model, Array.isArray(body.input) ? body.input.length : 1) };
    return { status: 404, body: { error: { message: `Unknown request URL: POST ${req.pathname}`, type: 'invalid_request_error', code: 'unknown_url' } } };
  };
}
