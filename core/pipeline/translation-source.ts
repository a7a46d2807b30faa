// The request as translation reads it: its canonical form, decoded once before the first attempt,
// and the client's own JSON, for codecs that restore what canonical cannot carry.
import type { CanonicalRequest, CanonicalResponse } from '../canonical/types.ts';
import type { EncodeContext, ExpandedRequest, InboundCodec, Principal, Route } from '../hooks.ts';
import type { HostKeyMask } from './credential-scrub.ts';
import type { InferenceCall } from '../plugins/context.ts';
import { functionTools, webSearchTool } from '../canonical/web-search.ts';

const HEADER_SAFE_NAME = /^[\w.:[\]-]{1,100}$/;
/** Names listed at most: the header stays short whatever the request holds. */
const MAX_DROPPED_NAMES = 32;
/** How long a stored answer's last byte waits for its write: a slow database never holds an answer longer. */
const REMEMBER_WAIT_MS = 2_000;

export class TranslationSource {
  /** What each route's upstream encoder left out (a failover or a hedge encodes for another route). */
  private upstreamDropped: Map<Route, string[]> | null = null;

  private constructor(
    readonly request: CanonicalRequest, readonly inbound: unknown, readonly dropped: string[],
    private readonly codec: InboundCodec, private readonly expanded: ExpandedRequest | null, private readonly principal: Principal,
  ) {}

  /**
   * Decodes the call's JSON with its shape's codec (a 400 in the caller's shape when it does not
   * hold), after a stateful shape resolved its conversation references (a 404 when one is unknown).
   */
  static async decode(codec: InboundCodec, call: InferenceCall, principal: Principal): Promise<TranslationSource> {
    const json = call.json();
    const expanded = codec.state ? await codec.state.expand(json, principal) : null;
    const dropped = codec.droppedParameters?.(json) ?? [];
    let request = codec.decodeRequest(expanded?.json ?? json);
    if (call.upstreamWebSearch === false && webSearchTool(request.tools)) request = { ...request, tools: functionTools(request.tools, dropped) };
    return new TranslationSource(request, json, dropped, codec, expanded, principal);
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

  /** Notes what the upstream encoder left out of the request it encoded for `route`. */
  noteUpstreamDropped(route: Route, names: string[]): void {
    if (names.length > 0) (this.upstreamDropped ??= new Map()).set(route, names);
    else this.upstreamDropped?.delete(route);
  }

  /**
   * The x-relay-dropped header of a translated response: what the client sent that the upstream
   * of `route` (the one that answered) never saw, and what of the answer the client does not get
   * (`answer`: parts the upstream's decoder or the client's encoder had no place for). A name
   * taken from the request (an item's type) may hold anything; one a header cannot carry as it
   * is goes as `unnamed`.
   */
  droppedHeader(route?: Route, answer: readonly string[] = []): Record<string, string> {
    const value = this.droppedNames(route, answer);
    return value === '' ? {} : { 'x-relay-dropped': value };
  }

  /** The value of x-relay-dropped (empty when nothing was dropped). */
  droppedNames(route?: Route, answer: readonly string[] = []): string {
    const upstream = route === undefined ? undefined : this.upstreamDropped?.get(route);
    const names = new Set<string>();
    for (const name of [...this.dropped, ...(upstream ?? []), ...answer]) names.add(HEADER_SAFE_NAME.test(name) ? name : 'unnamed');
    return [...names].slice(0, MAX_DROPPED_NAMES).join(', ');
  }

  encodeContext(requestId: string, model: string): EncodeContext {
    const ctx: EncodeContext = { requestId, model, request: this.request, inbound: this.inbound };
    if (this.expanded?.stored) ctx.stored = true;
    return ctx;
  }

  /** Whether the answer is to be kept (a stateful shape, store not false). */
  get keepsAnswer(): boolean {
    return this.expanded?.stored === true;
  }

  /**
   * Keeps the answer of a stateful shape; call before its last byte is sent. Resolves once it is
   * written, or after REMEMBER_WAIT_MS (the write goes on): a follow-up sent to any instance of a
   * deployment as soon as the answer completed finds it (same-instance lookups also wait for pending writes).
   * `keepOut` masks the answering route's host key out of what is kept (ClientWriter.keyMask).
   */
  async remember(response: CanonicalResponse, ctx: EncodeContext, keepOut: HostKeyMask | null): Promise<void> {
    if (!this.expanded?.stored || !this.codec.state) return;
    const written = this.codec.state.remember(this.expanded, response, ctx, this.principal, keepOut);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, REMEMBER_WAIT_MS); });
    try {
      await Promise.race([written, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The call's prompt in canonical form as sent to `route`, for a vendor counter that takes another
 * shape than the one sent: the translation's, else the codec's reading of the client's body.
 */
export function canonicalPrompt(route: Route, call: InferenceCall, codec: InboundCodec | undefined, translation: TranslationSource | null): (() => CanonicalRequest) | undefined {
  if (translation) return () => translation.routed(route, false);
  if (!codec) return undefined;
  return () => ({ ...codec.decodeRequest(call.json()), model: route.upstreamModel, stream: false });
}
