// The request as translation reads it: its canonical form, decoded once before the first attempt,
// and the client's own JSON, for codecs that restore what canonical cannot carry. Both are let go
// at the answer's first byte, as the body is (body-bytes.ts): an agent's translated turn streams
// for seconds to minutes, and its parsed request held on to all that time (measured: ~520 KB of
// heap a stream for a 400 KB Codex turn sent to a Messages upstream, 24 streams at once).
// Encoders read what they echo from their EncodeContext when they are made, or at the latest with
// the stream's first event, which is before the first byte; reading it later throws.
import type { CanonicalRequest } from '../canonical/types.ts';
import type { EncodeContext, InboundCodec, Route } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';

const RELEASED = 'the translated request was let go once its answer began (TranslationSource.release)';

export class TranslationSource {
  private canonical: CanonicalRequest | null;
  private call: InferenceCall | null;

  private constructor(canonical: CanonicalRequest, call: InferenceCall) {
    this.canonical = canonical;
    this.call = call;
  }

  /** Decodes the call's JSON with its shape's codec (a 400 in the caller's shape when it does not hold). */
  static decode(codec: InboundCodec, call: InferenceCall): TranslationSource {
    return new TranslationSource(codec.decodeRequest(call.json), call);
  }

  get request(): CanonicalRequest {
    if (this.canonical === null) throw new Error(RELEASED);
    return this.canonical;
  }

  get inbound(): unknown {
    if (this.call === null) throw new Error(RELEASED);
    return this.call.json;
  }

  /**
   * The canonical request as sent to `route`: its upstream model and the call's `stream`, and no
   * `reasoning` for a model the catalog marks `reasoning: false`, whatever the client asked.
   */
  routed(route: Route, stream: boolean): CanonicalRequest {
    // Object.assign, not `{ ...canonical, model, stream }`: V8's slow path for a literal that starts with a spread (core/http/upstream.ts).
    const routed = Object.assign({}, this.request, { model: route.upstreamModel, stream });
    if (routed.reasoning !== undefined && route.model?.spec.reasoning === false) delete routed.reasoning;
    return routed;
  }

  /** What an encoder reads about the request, holding nothing once the source lets go. */
  encodeContext(requestId: string, model: string): EncodeContext {
    return new SourceEncodeContext(requestId, model, this);
  }

  release(): void {
    this.canonical = null;
    this.call = null;
  }
}

class SourceEncodeContext implements EncodeContext {
  constructor(readonly requestId: string, readonly model: string, private readonly source: TranslationSource) {}

  get request(): CanonicalRequest {
    return this.source.request;
  }

  get inbound(): unknown {
    return this.source.inbound;
  }
}
