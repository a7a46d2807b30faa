// The OpenAI adapter: OpenAI and every OpenAI-compatible server (vLLM, Ollama, LM Studio,
// llama.cpp). The host key goes in `Authorization: Bearer`.
import { sendToHost, type ShapeId, type UpstreamRequest, type VendorAdapter } from '../../core/plugin-api.ts';
import * as codec from './codec/index.ts';
import { openaiBaseUrlProblem, openaiPath } from './base-url.ts';
import { chatUsageRequest } from './usage-request.ts';
import { countOpenAITokens } from './count-tokens.ts';

const ENDPOINTS: Record<string, string> = {
  'openai.chat': '/chat/completions',
  'openai.responses': '/responses',
  'openai.embeddings': '/embeddings',
  'openai.input_tokens': '/responses/input_tokens',
};

export const OPENAI_SHAPES: readonly ShapeId[] = ['openai.chat', 'openai.responses', 'openai.embeddings', 'openai.input_tokens'];

export interface OpenAIAdapterOptions {
  /** Ask for usage on streamed Chat Completions whose clients did not (see usage-request.ts). */
  injectStreamUsage: boolean;
}

export function createOpenAIAdapter(id: string, options: OpenAIAdapterOptions = { injectStreamUsage: true }): VendorAdapter {
  return {
    id,
    shapes: OPENAI_SHAPES,
    translationShape(routeShapes, inbound) {
      // Token counting goes to OpenAI's own counter, or nowhere (never to a generation).
      if (inbound === 'anthropic.count_tokens') return routeShapes.includes('openai.input_tokens') ? 'openai.input_tokens' : null;
      if (inbound === 'openai.input_tokens') return null;
      // Responses clients keep Responses semantics where the upstream has them; everything
      // else goes through Chat Completions, which every OpenAI-compatible server speaks.
      if (inbound === 'openai.responses' && routeShapes.includes('openai.responses')) return 'openai.responses';
      if (routeShapes.includes('openai.chat')) return 'openai.chat';
      if (routeShapes.includes('openai.responses')) return 'openai.responses';
      return null;
    },
    send(req: UpstreamRequest) {
      const endpoint = ENDPOINTS[req.shape];
      if (!endpoint) throw new Error(`the openai adapter does not speak ${req.shape}`);
      return sendToHost(req, openaiPath(req.route.host.spec.baseUrl, endpoint), (key) => ({ authorization: `Bearer ${key}` }));
    },
    baseUrlProblem: openaiBaseUrlProblem,
    encodeRequest: codec.encodeRequest,
    decodeResponse: codec.decodeResponse,
    streamDecoder: codec.streamDecoder,
    decodeError: codec.decodeError,
    usageFromBody: codec.usageFromBody,
    streamInspector: codec.streamInspector,
    countTokens: countOpenAITokens,
    ...(options.injectStreamUsage ? { usageRequest: chatUsageRequest } : {}),
  };
}
