// Translation between the canonical shape and Gemini's generateContent: the VendorAdapter
// translation hooks (pure functions, no HTTP). One upstream shape, 'gemini.generate'.
import { RelayError, type RelayErrorBody, type Route, type ShapeId, type StreamDecoder, type StreamInspector, type VendorAdapter } from '../../../core/plugin-api.ts';
import { type CanonicalRequest, type CanonicalResponse, type Usage } from '../../../core/plugin-api/canonical.ts';
import { decodeGeminiError } from './errors.ts';
import { geminiStreamInspector } from './inspector.ts';
import { encodeGeminiRequest } from './request.ts';
import { decodeGeminiResponse } from './response.ts';
import type { SchemaDialect } from './schema-dialect.ts';
import { geminiStreamDecoder } from './stream.ts';
import { usageFromGemini } from './usage.ts';

export const GEMINI_SHAPE: ShapeId = 'gemini.generate';

type TranslationHooks = Pick<VendorAdapter, 'encodeRequest' | 'decodeResponse' | 'streamDecoder' | 'decodeError' | 'usageFromBody' | 'streamInspector'>;

function expectGemini(shape: ShapeId): void {
  if (shape !== GEMINI_SHAPE) throw new RelayError('RELAY_ERR_INTERNAL', `the Gemini codec does not translate ${shape}`);
}

export function geminiTranslation(dialect: SchemaDialect): TranslationHooks {
  return {
    encodeRequest(shape: ShapeId, request: CanonicalRequest, _route: Route, dropped?: string[]): unknown {
      expectGemini(shape);
      return encodeGeminiRequest(request, dialect, dropped);
    },
    decodeResponse(shape: ShapeId, body: unknown, route: Route, request: CanonicalRequest, dropped?: string[]): CanonicalResponse {
      expectGemini(shape);
      return decodeGeminiResponse(body, route, request, dropped);
    },
    streamDecoder(shape: ShapeId, route: Route, request: CanonicalRequest, dropped?: string[]): StreamDecoder {
      expectGemini(shape);
      return geminiStreamDecoder(route, request, dropped);
    },
    decodeError: (_shape: ShapeId, status: number, body: string): RelayErrorBody => decodeGeminiError(status, body),
    usageFromBody: (_shape: ShapeId, body: unknown): Usage | null => usageFromGemini((body as { usageMetadata?: unknown } | null)?.usageMetadata),
    streamInspector: (_shape: ShapeId): StreamInspector => geminiStreamInspector(),
  };
}

export { GEMINI_ORIGIN, GEMINI_REQUEST_DROPPED, encodeGeminiRequest } from './request.ts';
export { decodeGeminiResponse } from './response.ts';
export { GEMINI_RESPONSE_DROPPED } from './answer-parts.ts';
export { geminiStreamDecoder } from './stream.ts';
export { decodeGeminiError, isInvalidApiKey, parseGeminiError } from './errors.ts';
export { usageFromGemini } from './usage.ts';
export { EFFORT_BUDGETS } from './thinking.ts';
export type { SchemaDialect } from './schema-dialect.ts';
