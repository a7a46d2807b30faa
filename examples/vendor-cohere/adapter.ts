// The Cohere adapter: POST {baseUrl}/chat (baseUrl https://api.cohere.com/v2), JSON answers or
// an SSE stream when the body says `stream: true`, the host key as `Authorization: Bearer`.
import { sendToHost, type UpstreamRequest, type VendorAdapter } from 'relay-gateway';
import { COHERE_SHAPE, cohereTranslation } from './codec/index.ts';

export function createCohereAdapter(id: string): VendorAdapter {
  return {
    id,
    shapes: [COHERE_SHAPE],
    translationShape: (routeShapes) => (routeShapes.includes(COHERE_SHAPE) ? COHERE_SHAPE : null),
    send(req: UpstreamRequest) {
      if (req.shape !== COHERE_SHAPE) throw new Error(`the cohere adapter does not speak ${req.shape}`);
      return sendToHost(req, '/chat', (key) => ({ authorization: `Bearer ${key}` }), { accept: req.stream ? 'text/event-stream' : 'application/json' });
    },
    ...cohereTranslation,
  };
}
