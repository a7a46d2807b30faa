// What the adapter needs per upstream shape: the VendorAdapter translation hooks without the
// shape argument (index.ts dispatches on it).
import type { CanonicalRequest, CanonicalResponse, RelayErrorBody, Route, StreamDecoder, StreamInspector, Usage } from '../../../core/plugin-api.ts';

export interface ShapeCodec {
  encodeRequest(request: CanonicalRequest, route: Route): unknown;
  decodeResponse(body: unknown, route: Route, request?: CanonicalRequest): CanonicalResponse;
  streamDecoder(route: Route, request?: CanonicalRequest): StreamDecoder;
  decodeError(status: number, body: string): RelayErrorBody;
  usageFromBody(body: unknown): Usage | null;
  streamInspector(): StreamInspector;
}
