// The Anthropic adapter: Messages and count_tokens. The host key goes in `x-api-key`, with an
// `anthropic-version` (the client's own when it sent one).
import { sendToHost, type ShapeId, type UpstreamRequest, type VendorAdapter } from '../../core/plugin-api.ts';
import * as codec from './codec/index.ts';

const ENDPOINTS: Record<string, string> = {
  'anthropic.messages': '/messages',
  'anthropic.count_tokens': '/messages/count_tokens',
};

export const ANTHROPIC_SHAPES: readonly ShapeId[] = ['anthropic.messages', 'anthropic.count_tokens'];
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

export function createAnthropicAdapter(id: string, anthropicVersion: string): VendorAdapter {
  return {
    id,
    shapes: ANTHROPIC_SHAPES,
    translationShape(routeShapes, inbound) {
      // Token counting goes to Anthropic's own counter, or nowhere (never to a generation).
      if (inbound === 'openai.input_tokens') return routeShapes.includes('anthropic.count_tokens') ? 'anthropic.count_tokens' : null;
      if (inbound === 'anthropic.count_tokens') return null;
      return routeShapes.includes('anthropic.messages') ? 'anthropic.messages' : null;
    },
    send(req: UpstreamRequest) {
      const endpoint = ENDPOINTS[req.shape];
      if (!endpoint) throw new Error(`the anthropic adapter does not speak ${req.shape}`);
      return sendToHost(req, endpoint, (key) => ({ 'x-api-key': key }), { 'anthropic-version': anthropicVersion });
    },
    encodeRequest: codec.encodeRequest,
    decodeResponse: codec.decodeResponse,
    streamDecoder: codec.streamDecoder,
    decodeError: codec.decodeError,
    usageFromBody: codec.usageFromBody,
    streamInspector: codec.streamInspector,
  };
}
