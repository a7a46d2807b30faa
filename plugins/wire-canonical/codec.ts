// The canonical shape on the wire (POST /v1/generate): requests are validated against the
// TypeBox schema CanonicalRequest, responses go out as they are (named by the served model, as
// every shape's are), stream events are SSE frames
// `event: <type>` with the event as JSON data, and errors use the canonical error body.
import * as canonical from '../../core/plugin-api/canonical.ts';
import { sseFrame, validateBody } from '../../core/plugin-api.ts';
import type { CanonicalRequest, StreamEvent } from '../../core/plugin-api/canonical.ts';
import type { EncodeContext, InboundCodec, RelayErrorBody, RenderedError, StreamEncoder } from '../../core/plugin-api.ts';

/** Nothing is dropped: the canonical shape carries every canonical field. */
export const CANONICAL_DROPPED = {} as const;

export function canonicalErrorBody(error: RelayErrorBody): canonical.CanonicalErrorBody {
  return {
    error: {
      type: error.type, code: error.code, message: error.message, status: error.status,
      ...(error.field === undefined ? {} : { field: error.field }),
    },
  };
}

/** The served model's name, as every shape's answer carries it (ctx.model), not the upstream's own. */
function streamEncoder(ctx: EncodeContext): StreamEncoder {
  return {
    contentType: 'text/event-stream; charset=utf-8',
    encode: (event: StreamEvent): string => sseFrame(event.type, JSON.stringify(event.type === 'start' ? { ...event, model: ctx.model } : event)),
    finish: (): string => '',
  };
}

export const canonicalCodec: InboundCodec = {
  shape: 'canonical',
  decodeRequest: (body: unknown): CanonicalRequest => validateBody<CanonicalRequest>(canonical.CanonicalRequest, body),
  encodeResponse: (response, ctx) => ({ ...response, model: ctx.model }),
  streamEncoder,
  renderError: (error: RelayErrorBody): RenderedError => ({ status: error.status, body: canonicalErrorBody(error) }),
};
