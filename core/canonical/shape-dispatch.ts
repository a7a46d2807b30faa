// A vendor adapter's translation hooks, dispatched on the shape id to one codec per upstream
// shape: each codec is the VendorAdapter hooks without the shape argument.
import { RelayError } from '../errors.ts';
import type { RelayErrorBody } from '../errors.ts';
import type { Route, ShapeId, StreamDecoder, StreamInspector, VendorAdapter } from '../hooks.ts';
import type { CanonicalRequest, CanonicalResponse, Usage } from './types.ts';

export interface ShapeCodec {
  encodeRequest(request: CanonicalRequest, route: Route, dropped?: string[]): unknown;
  decodeResponse(body: unknown, route: Route, request?: CanonicalRequest, dropped?: string[]): CanonicalResponse;
  streamDecoder(route: Route, request?: CanonicalRequest, dropped?: string[]): StreamDecoder;
  decodeError(status: number, body: string): RelayErrorBody;
  usageFromBody(body: unknown): Usage | null;
  streamInspector(): StreamInspector;
}

export type TranslationHooks = Pick<VendorAdapter, 'encodeRequest' | 'decodeResponse' | 'streamDecoder' | 'decodeError' | 'usageFromBody' | 'streamInspector'>;

/**
 * Translation needs the shape's codec; errors and stream inspection of a shape that is only
 * passed through (count_tokens, say) use `fallback`; usage of an unknown shape is null.
 */
export function dispatchByShape(vendor: string, codecs: Record<ShapeId, ShapeCodec>, fallback: ShapeCodec): TranslationHooks {
  const codecFor = (shape: ShapeId): ShapeCodec => {
    const codec = codecs[shape];
    if (!codec) throw new RelayError('RELAY_ERR_INTERNAL', `the ${vendor} codec does not translate ${shape}`);
    return codec;
  };
  return {
    encodeRequest: (shape, request, route, dropped) => codecFor(shape).encodeRequest(request, route, dropped),
    decodeResponse: (shape, body, route, request, dropped) => codecFor(shape).decodeResponse(body, route, request, dropped),
    streamDecoder: (shape, route, request, dropped) => codecFor(shape).streamDecoder(route, request, dropped),
    decodeError: (shape, status, body) => (codecs[shape] ?? fallback).decodeError(status, body),
    usageFromBody: (shape, body) => codecs[shape]?.usageFromBody(body) ?? null,
    streamInspector: (shape) => (codecs[shape] ?? fallback).streamInspector(),
  };
}
