// A copy of a passed-through stateful answer (OpenAI Responses) for Relay's Responses state, so
// a conversation started on an OpenAI binding continues after a failover to another vendor. Only
// for models that may be served in another shape; the bytes to the client are never held for it.
import type { ForwardPlan, InboundCodec, Principal, ShapeId } from '../hooks.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Model } from '../catalog/kinds.ts';
import type { VendorAdapter } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';
import { SseParser } from '../http/sse.ts';
import type { RequestLog } from './request-log.ts';

/** Whether a model (or its fallbacks) has bindings both on the call's shape and on another one. */
export function mixesShapes(model: Model | undefined, hasFallbacks: boolean, shape: ShapeId, snapshot: CatalogSnapshot, adapters: ReadonlyMap<string, VendorAdapter>): boolean {
  if (!model) return false;
  if (hasFallbacks) return true;
  const kinds = new Set<boolean>();
  for (const binding of model.spec.bindings) {
    const host = snapshot.hosts.get(binding.hostId);
    const provider = host ? snapshot.providers.get(host.spec.providerId) : undefined;
    const adapter = provider ? adapters.get(provider.spec.adapter) : undefined;
    if (!provider || !adapter) continue;
    const shapes = provider.spec.shapes ? adapter.shapes.filter((s) => provider.spec.shapes!.includes(s)) : adapter.shapes;
    kinds.add(shapes.includes(shape));
  }
  return kinds.size > 1;
}

/** A `response.completed` frame wraps the response in a few members of its own. */
const FRAME_SLACK_BYTES = 4096;

export class ForwardedCapture {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private parser: SseParser | null = null;
  private completed: unknown = null;
  private warned = false;

  /** A copy larger than this is not kept: the store would not keep the answer. */
  private readonly maxBytes: number;

  private constructor(private readonly codec: InboundCodec, private readonly plan: ForwardPlan, private readonly principal: Principal, private readonly log: RequestLog) {
    this.maxBytes = plan.maxAnswerBytes;
  }

  static async open(codec: InboundCodec, call: InferenceCall, principal: Principal, log: RequestLog): Promise<ForwardedCapture | null> {
    if (!codec.state?.forward || !codec.state.rememberForwarded) return null;
    // Best effort: a store that does not answer never fails a passthrough request (it is forwarded as sent).
    const plan = await codec.state.forward(call.json(), principal).catch(() => null);
    return plan ? new ForwardedCapture(codec, plan, principal, log) : null;
  }

  /** The request to forward instead of the client's bytes (it references what only Relay knows), or null. */
  get substitute(): Record<string, unknown> | null {
    return this.plan.substitute;
  }

  /** A chunk of the answer as it went to the client: a JSON body, or SSE frames. */
  observe(chunk: Buffer, stream: boolean): void {
    if (stream) {
      this.parser ??= new SseParser((event, data) => {
        if (event !== 'response.completed' && event !== 'response.incomplete') return;
        try {
          this.completed = (JSON.parse(data) as { response?: unknown }).response ?? null;
        } catch {
          this.completed = null;
        }
      }, { maxFrameBytes: this.maxBytes + FRAME_SLACK_BYTES, onOversize: () => this.tooLarge() });
      this.parser.feed(chunk);
      return;
    }
    if (this.bytes > this.maxBytes) return;
    this.bytes += chunk.length;
    if (this.bytes <= this.maxBytes) this.chunks.push(chunk);
    else {
      this.chunks.length = 0;
      this.tooLarge();
    }
  }

  /** Said once, as the store says it of a conversation over its cap: a later turn that names this answer gets a 404. */
  private tooLarge(): void {
    if (this.warned) return;
    this.warned = true;
    this.log.warn({ maxBytes: this.maxBytes }, 'forwarded response not stored: the answer alone exceeds responsesState.maxBytes');
  }

  /** Keeps the answer once it was sent (the write runs in the background). */
  finish(stream: boolean, status: number): void {
    if (status !== 200) return;
    let response: unknown = this.completed;
    if (!stream) {
      if (this.bytes > this.maxBytes || this.chunks.length === 0) return;
      try {
        response = JSON.parse(Buffer.concat(this.chunks).toString('utf8'));
      } catch {
        return; // compressed or not JSON: nothing is kept
      }
    }
    if (response) this.codec.state!.rememberForwarded!(this.plan, response, this.principal);
  }
}
