// The request as translation reads it: its canonical form, decoded once before the first attempt,
// and the client's own JSON, for codecs that restore what canonical cannot carry.
import type { CanonicalRequest } from '../canonical/types.ts';
import type { EncodeContext, InboundCodec, Route } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';

export class TranslationSource {
  private constructor(readonly request: CanonicalRequest, readonly inbound: unknown, readonly dropped: string[]) {}

  /** Decodes the call's JSON with its shape's codec (a 400 in the caller's shape when it does not hold). */
  static decode(codec: InboundCodec, call: InferenceCall): TranslationSource {
    const json = call.json();
    return new TranslationSource(codec.decodeRequest(json), json, codec.droppedParameters?.(json) ?? []);
  }

  /**
   * The canonical request as sent to `route`: its upstream model and the call's `stream`, and no
   * `reasoning` for a model the catalog marks `reasoning: false`, whatever the client asked.
   */
  routed(route: Route, stream: boolean): CanonicalRequest {
    const routed = { ...this.request, model: route.upstreamModel, stream };
    if (routed.reasoning !== undefined && route.model?.spec.reasoning === false) delete routed.reasoning;
    return routed;
  }

  /** The x-relay-dropped header of a translated response: what the client sent that no upstream saw. */
  droppedHeader(): Record<string, string> {
    return this.dropped.length === 0 ? {} : { 'x-relay-dropped': this.dropped.join(', ') };
  }

  encodeContext(requestId: string, model: string): EncodeContext {
    return { requestId, model, request: this.request, inbound: this.inbound };
  }
}
