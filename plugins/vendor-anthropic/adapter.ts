// The Anthropic adapter: Messages and count_tokens. The host key goes in `x-api-key`, with an
// `anthropic-version` (the client's own when it sent one).
import { joinUrl, sendUpstream, type ShapeId, type UpstreamRequest, type VendorAdapter } from '../../core/plugin-api.ts';
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
    translationShape(routeShapes) {
      return routeShapes.includes('anthropic.messages') ? 'anthropic.messages' : null;
    },
    send(req: UpstreamRequest) {
      const endpoint = ENDPOINTS[req.shape];
      if (!endpoint) throw new Error(`the anthropic adapter does not speak ${req.shape}`);
      const host = req.route.host.spec;
      const headers: Record<string, string> = { 'anthropic-version': anthropicVersion, ...req.headers, ...(host.headers ?? {}), 'content-type': 'application/json' };
      if (req.credential !== null) headers['x-api-key'] = req.credential;
      return sendUpstream(joinUrl(host.baseUrl, endpoint) + (req.search ?? ''), {
        headers, body: req.body, signal: req.signal, timeoutMs: host.timeoutMs,
      });
    },
    encodeRequest: codec.encodeRequest,
    decodeResponse: codec.decodeResponse,
    streamDecoder: codec.streamDecoder,
    decodeError: codec.decodeError,
    usageFromBody: codec.usageFromBody,
    streamInspector: codec.streamInspector,
  };
}
