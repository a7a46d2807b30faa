// Translation between the canonical shape and OpenAI's upstream shapes, dispatching on the
// shape id: the VendorAdapter hooks of the OpenAI adapter (pure functions, no HTTP).
import { RelayError } from '../../../core/plugin-api.ts';
import type { CanonicalRequest, CanonicalResponse, RelayErrorBody, Route, ShapeId, StreamDecoder, StreamInspector, Usage } from '../../../core/plugin-api.ts';
import { chatUpstream } from './chat.ts';
import { embeddingsUpstream } from './embeddings.ts';
import { responsesUpstream } from './responses.ts';
import type { ShapeCodec } from './shape-codec.ts';

const CODECS: Record<string, ShapeCodec> = {
  'openai.chat': chatUpstream,
  'openai.responses': responsesUpstream,
  'openai.embeddings': embeddingsUpstream,
};

function codecFor(shape: ShapeId): ShapeCodec {
  const codec = CODECS[shape];
  if (!codec) throw new RelayError('RELAY_ERR_INTERNAL', `the OpenAI codec does not speak ${shape}`);
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
export function decodeError(shape: ShapeId, status: number, body: string): RelayErrorBody {
  return (CODECS[shape] ?? chatUpstream).decodeError(status, body);
}
export function usageFromBody(shape: ShapeId, body: unknown): Usage | null {
  return CODECS[shape]?.usageFromBody(body) ?? null;
}
export function streamInspector(shape: ShapeId): StreamInspector {
  return codecFor(shape).streamInspector();
}

export { CHAT_UPSTREAM_DROPPED } from './chat-request.ts';
export { RESPONSES_UPSTREAM_DROPPED, OPENAI_ORIGIN } from './responses-request.ts';
