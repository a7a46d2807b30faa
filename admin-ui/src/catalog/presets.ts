// Presets for OpenAI-compatible upstreams: the provider (adapter openai, and the wire shapes the
// server really has, so Responses clients are translated through Chat Completions instead of
// meeting a 404) and the host (base URL, extra headers). plugins/vendor-openai/README.md
// documents them; test/e2e/openai-compatible-presets.test.ts runs each against a fake upstream
// that answers as that server does.

export interface UpstreamPreset {
  id: string;
  label: string;
  adapter: 'openai';
  /** Wire shapes the server speaks (the provider's spec.shapes). */
  shapes: string[];
  baseUrl: string;
  /** Extra host headers (OpenRouter's app attribution); values are examples to edit. */
  headers?: Record<string, string>;
  /** What the host key is. */
  key: string;
}

const CHAT = ['openai.chat'];
const CHAT_EMBEDDINGS = ['openai.chat', 'openai.embeddings'];

export const UPSTREAM_PRESETS: UpstreamPreset[] = [
  {
    id: 'openrouter', label: 'OpenRouter', adapter: 'openai', shapes: CHAT, baseUrl: 'https://openrouter.ai/api/v1',
    headers: { 'http-referer': 'https://relay.example.com', 'x-title': 'Relay' }, key: 'an OpenRouter API key (sk-or-...)',
  },
  { id: 'groq', label: 'Groq', adapter: 'openai', shapes: CHAT, baseUrl: 'https://api.groq.com/openai/v1', key: 'a Groq API key (gsk_...)' },
  { id: 'mistral', label: 'Mistral', adapter: 'openai', shapes: CHAT_EMBEDDINGS, baseUrl: 'https://api.mistral.ai/v1', key: 'a Mistral API key' },
  { id: 'deepseek', label: 'DeepSeek', adapter: 'openai', shapes: CHAT, baseUrl: 'https://api.deepseek.com/v1', key: 'a DeepSeek API key (sk-...)' },
  { id: 'together', label: 'Together AI', adapter: 'openai', shapes: CHAT_EMBEDDINGS, baseUrl: 'https://api.together.xyz/v1', key: 'a Together API key' },
  { id: 'fireworks', label: 'Fireworks AI', adapter: 'openai', shapes: CHAT_EMBEDDINGS, baseUrl: 'https://api.fireworks.ai/inference/v1', key: 'a Fireworks API key (fw_...)' },
  { id: 'vllm', label: 'vLLM', adapter: 'openai', shapes: CHAT_EMBEDDINGS, baseUrl: 'http://localhost:8000/v1', key: "the server's --api-key, or any value when it has none" },
  { id: 'ollama', label: 'Ollama', adapter: 'openai', shapes: CHAT_EMBEDDINGS, baseUrl: 'http://localhost:11434/v1', key: 'any value (Ollama ignores it)' },
  { id: 'lm-studio', label: 'LM Studio', adapter: 'openai', shapes: CHAT_EMBEDDINGS, baseUrl: 'http://localhost:1234/v1', key: 'any value (LM Studio ignores it)' },
];

/** What choosing a preset sets in a provider's or a host's draft spec (other fields are kept). */
export function applyPreset(kind: 'providers' | 'hosts', preset: UpstreamPreset, spec: Record<string, unknown>): Record<string, unknown> {
  if (kind === 'providers') return { ...spec, adapter: preset.adapter, shapes: [...preset.shapes] };
  return { ...spec, baseUrl: preset.baseUrl, ...(preset.headers ? { headers: { ...preset.headers } } : {}) };
}
