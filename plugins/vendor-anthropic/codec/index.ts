// Translation between the canonical shape and Anthropic's upstream shape, dispatching on the
// shape id: the VendorAdapter hooks of the Anthropic adapter (pure functions, no HTTP).
// 'anthropic.count_tokens' is passed through only: its errors are read, it has no usage.
import { RelayError } from '../../../core/plugin-api.ts';
import type { CanonicalRequest, CanonicalResponse, RelayErrorBody, Route, ShapeId, StreamDecoder, StreamInspector, Usage } from '../../../core/plugin-api.ts';
import { decodeAnthropicError } from './errors.ts';
import { messagesUpstream } from './messages.ts';
import type { ShapeCodec } from './shape-codec.ts';

const CODECS: Record<string, ShapeCodec> = {
  'anthropic.messages': messagesUpstream,
};

function codecFor(shape: ShapeId): ShapeCodec {
  const codec = CODECS[shape];
  if (!codec) throw new RelayError('RELAY_ERR_INTERNAL', `the Anthropic codec does not translate ${shape}`);
  return codec;
}

export function encodeRequest(shape: ShapeId, request: CanonicalRequest, route: Route): unknown {
  return codecFor(shape).encodeRequest(request, route);
}
export function decodeResponse(shape: ShapeId, body: unknown, route: Route, request?: CanonicalRequest): CanonicalResponse {
  return codecFor(shape).decodeResponse(body, route, request);
}
export function streamDecoder(shape: ShapeId, route: Route, request?: CanonicalRequest): StreamDecoder {
  return codecFor(shape).streamDecoder(route, request);
}
export function decodeError(_shape: ShapeId, status: number, body: string): RelayErrorBody {
  return decodeAnthropicError(status, body);
}
export function usageFromBody(shape: ShapeId, body: unknown): Usage | null {
  return CODECS[shape]?.usageFromBody(body) ?? null;
}
export function streamInspector(shape: ShapeId): StreamInspector {
  return (CODECS[shape] ?? messagesUpstream).streamInspector();
}

export { MESSAGES_UPSTREAM_DROPPED, ANTHROPIC_ORIGIN, anthropicToolId } from './messages-request.ts';
export { EFFORT_BUDGETS, DEFAULT_MAX_TOKENS, thinkingFor } from './thinking-budget.ts';
