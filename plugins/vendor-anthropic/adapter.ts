// The Anthropic adapter: Messages and count_tokens. The host key goes in `x-api-key`, with an
// `anthropic-version` (the client's own when it sent one).
import { readUpstreamBody, sendToHost, type ShapeId, type UpstreamRequest, type VendorAdapter } from '../../core/plugin-api.ts';
import * as codec from './codec/index.ts';
import { withCacheBreakpoints } from './codec/cache-breakpoints.ts';
import { anthropicBaseUrlProblem, anthropicPath } from './base-url.ts';

const ENDPOINTS: Record<string, string> = {
  'anthropic.messages': '/messages',
  'anthropic.count_tokens': '/messages/count_tokens',
};

export const ANTHROPIC_SHAPES: readonly ShapeId[] = ['anthropic.messages', 'anthropic.count_tokens'];
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicAdapterOptions {
  /** Prompt-cache breakpoints on translated Messages requests (cache-breakpoints.ts). */
  cacheTranslated: boolean;
}

export function createAnthropicAdapter(id: string, anthropicVersion: string, options: AnthropicAdapterOptions = { cacheTranslated: true }): VendorAdapter {
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
      return sendToHost(req, anthropicPath(req.route.host.spec.baseUrl, endpoint), (key) => ({ 'x-api-key': key }), { 'anthropic-version': anthropicVersion });
    },
    baseUrlProblem: anthropicBaseUrlProblem,
    encodeRequest(shape, request, route, dropped) {
      const body = codec.encodeRequest(shape, request, route, dropped);
      return options.cacheTranslated && shape === 'anthropic.messages' ? withCacheBreakpoints(body as Record<string, unknown>) : body;
    },
    decodeResponse: codec.decodeResponse,
    streamDecoder: codec.streamDecoder,
    decodeError: codec.decodeError,
    usageFromBody: codec.usageFromBody,
    streamInspector: codec.streamInspector,
    countTokens(req: UpstreamRequest) {
      return countTokens(req, anthropicVersion);
    },
  };
}

/** A count's answer is `{"input_tokens": n}`: anything near this size is not one. */
const MAX_COUNT_BYTES = 64 * 1024;

// The members count_tokens takes: it refuses the others (max_tokens, stream, temperature, ...).
const COUNTED = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers'];

/** A Messages request's input tokens from count_tokens, or null when the upstream would not say. */
async function countTokens(req: UpstreamRequest, anthropicVersion: string): Promise<number | null> {
  if (req.shape !== 'anthropic.messages') return null;
  let request: Record<string, unknown>;
  try {
    request = JSON.parse(typeof req.body === 'string' ? req.body : req.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  const body = JSON.stringify(Object.fromEntries(COUNTED.filter((k) => request[k] !== undefined).map((k) => [k, request[k]])));
  const res = await sendToHost({ ...req, shape: 'anthropic.count_tokens', body, stream: false }, ENDPOINTS['anthropic.count_tokens']!, (key) => ({ 'x-api-key': key }), { 'anthropic-version': anthropicVersion });
  const read = await readUpstreamBody(res.body, MAX_COUNT_BYTES);
  if (res.status !== 200 || read.truncated) return null;
  try {
    const tokens = (JSON.parse(read.bytes.toString('utf8')) as { input_tokens?: unknown }).input_tokens;
    return typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : null;
  } catch {
    return null;
  }
}
