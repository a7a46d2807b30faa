// OpenTelemetry GenAI semantic conventions: the attribute names and values Relay's spans use, so
// that a trace backend that knows the conventions (Grafana, Honeycomb, Langfuse...) reads them.
import type { Route, ShapeId } from '../../core/plugin-api.ts';

export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  /** The conventions' current name for the vendor; `gen_ai.system` is its older one, set too for older readers. */
  provider: 'gen_ai.provider.name',
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningTokens: 'gen_ai.usage.reasoning.output_tokens',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
} as const;

/** Relay's vendor adapters by the conventions' provider names; an in-house adapter keeps its id. */
const PROVIDERS: Record<string, string> = {
  openai: 'openai',
  anthropic: 'anthropic',
  bedrock: 'aws.bedrock',
  'azure-openai': 'azure.ai.openai',
  // Claude on Vertex AI: the conventions name the platform that served it, as for Claude on Bedrock.
  'vertex-anthropic': 'gcp.vertex_ai',
};

export function providerName(route: Route): string {
  // A google host says which of Google's two APIs it is; gcp.gen_ai is for a backend not known.
  if (route.adapter.id === 'google') return (route.host.spec.options as { mode?: unknown } | undefined)?.mode === 'vertex' ? 'gcp.vertex_ai' : 'gcp.gemini';
  return PROVIDERS[route.adapter.id] ?? route.adapter.id;
}

/** The conventions' operation for an inbound or upstream shape. */
export function operationName(shape: ShapeId): string {
  if (shape.endsWith('.embeddings')) return 'embeddings';
  if (shape.endsWith('.count_tokens')) return 'count_tokens';
  if (shape.startsWith('google.') || shape.startsWith('gemini')) return 'generate_content';
  return 'chat';
}
