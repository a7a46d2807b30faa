// Translation between the canonical shape and Cohere's v2 chat: the VendorAdapter translation
// hooks (pure functions, no HTTP). One upstream shape, 'cohere.chat'.
import { dispatchByShape, type ShapeCodec } from 'relay-gateway/canonical';
import { type ShapeId } from 'relay-gateway';
import { decodeCohereError } from './errors.ts';
import { cohereStreamInspector } from './inspector.ts';
import { encodeCohereRequest } from './request.ts';
import { decodeCohereResponse } from './response.ts';
import { cohereStreamDecoder } from './stream.ts';
import { usageFromCohere } from './usage.ts';

export const COHERE_SHAPE: ShapeId = 'cohere.chat';

const cohereChat: ShapeCodec = {
  encodeRequest: (request, _route, dropped) => encodeCohereRequest(request, dropped),
  decodeResponse: (body, route, request) => decodeCohereResponse(body, route, request ?? { model: route.upstreamModel, messages: [] }),
  streamDecoder: (route, request) => cohereStreamDecoder(route, request ?? { model: route.upstreamModel, messages: [] }),
  decodeError: decodeCohereError,
  usageFromBody: (body) => usageFromCohere((body as { usage?: unknown } | null)?.usage),
  streamInspector: cohereStreamInspector,
};

export const cohereTranslation = dispatchByShape('Cohere', { [COHERE_SHAPE]: cohereChat }, cohereChat);

export { COHERE_REQUEST_DROPPED, encodeCohereRequest } from './request.ts';
export { COHERE_ORIGIN, decodeCohereResponse } from './response.ts';
export { cohereStreamDecoder } from './stream.ts';
export { decodeCohereError } from './errors.ts';
export { usageFromCohere } from './usage.ts';
