// What Relay keeps of a passed-through answer, read from its bytes as they go to the client, never
// holding them: its owner's record (the ids of what the upstream made for it, as the codec's
// ForwardedOwnership reads them, so another owner cannot name them), and for OpenAI Responses
// models that may be served in another shape a copy for Relay's Responses state, so a conversation
// continues after a failover to another vendor.
import type { ForwardedIdReader, ForwardPlan, InboundCodec, Principal, ShapeId } from '../hooks.ts';
import type { CatalogSnapshot } from '../catalog/snapshot.ts';
import type { Model } from '../catalog/kinds.ts';
import type { VendorAdapter } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';
import type { RequestLog } from './request-log.ts';
import type { UsageCopy } from './usage-copy.ts';
import type { HostKeyMask } from './credential-scrub.ts';
import { parsedObject } from '../responses-state/ledger-ownership.ts';

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

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const UNPARSED = Symbol('unparsed');

export class ForwardedCapture {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private completed: unknown = null;
  private warned = false;
  /** The ids the answer names, for its owner's record (empty when nothing is recorded). */
  private readonly ids = new Set<string>();

  /** A copy larger than this is not kept: the store would not keep the answer. */
  private readonly maxBytes: number;

  private constructor(private readonly codec: InboundCodec, private readonly plan: ForwardPlan | null, private readonly reader: ForwardedIdReader | null, private readonly principal: Principal, private readonly log: RequestLog) {
    this.maxBytes = plan?.maxAnswerBytes ?? 0;
  }

  /**
   * Null when there is nothing to keep (the codec records nothing, or its store is off). `mixes`:
   * the model may be served in another shape, so a copy of the conversation is kept as well.
   */
  static async open(codec: InboundCodec, call: InferenceCall, principal: Principal, log: RequestLog, mixes: boolean): Promise<ForwardedCapture | null> {
    const reader = codec.ownership?.reader(call) ?? null;
    const state = codec.state;
    // Best effort: a store that does not answer never fails a passthrough request (it is forwarded as sent).
    const plan = mixes && state?.forward && state.rememberForwarded ? await state.forward(call.json(), principal).catch(() => null) : null;
    return plan || reader ? new ForwardedCapture(codec, plan, reader, principal, log) : null;
  }

  /** The request to forward instead of the client's bytes (it references what only Relay knows), or null. */
  get substitute(): Record<string, unknown> | null {
    return this.plan?.substitute ?? null;
  }

  /** A chunk of a non-streamed answer as it went to the client (a stream's frames come through frame()). */
  observe(chunk: Buffer): void {
    if (!this.plan || this.bytes > this.maxBytes) return;
    this.bytes += chunk.length;
    if (this.bytes <= this.maxBytes) this.chunks.push(chunk);
    else {
      this.chunks.length = 0;
      this.tooLarge();
    }
  }

  /** One frame of a streamed answer, as the stream tap parsed it (the stream is parsed once). */
  frame(event: string | undefined, data: string): void {
    this.reader?.frameIds(event, data, this.ids);
    if (!this.plan || (event !== 'response.completed' && event !== 'response.incomplete')) return;
    if (data.length > this.maxBytes + FRAME_SLACK_BYTES) {
      this.tooLarge();
      return;
    }
    this.completed = parsedObject(data)?.response ?? null;
  }

  /** A frame past the stream tap's bound: it was skipped, so a response.completed in it is not kept. */
  oversizedFrame(): void {
    if (this.plan) this.tooLarge();
  }

  /** Said once, as the store says it of a conversation over its cap: a later turn that names this answer gets a 404. */
  private tooLarge(): void {
    if (this.warned) return;
    this.warned = true;
    this.log.warn({ maxBytes: this.maxBytes }, 'forwarded response not stored: the answer alone exceeds responsesState.maxBytes');
  }

  /**
   * Once the answer was sent (`delivered`: to its last byte): records its ids as the caller's and
   * keeps its copy (both written in the background), without the host key the caller's copy was
   * masked of (`keepOut`: read from the upstream's bytes, the copy still holds it). A non-streamed
   * answer is read from its copy (`copy`, the one kept for usage, when the keep's own copy has none).
   */
  finish(stream: boolean, status: number, delivered: boolean, keepOut: HostKeyMask | null, copy: UsageCopy | null = null): void {
    if (status < 200 || status >= 300) return;
    let response: unknown = this.completed;
    if (!stream) {
      const own = this.chunks.length > 0 && this.bytes <= this.maxBytes ? Buffer.concat(this.chunks) : null;
      const body = delivered ? own ?? (this.reader ? copy?.wholeBody() ?? null : null) : null;
      // Parsed at most once, for whichever reader asks first (compressed or not JSON: null).
      let answer: unknown = UNPARSED;
      const parse = (): unknown => (answer === UNPARSED ? (answer = body ? parsedAnswer(body) : null) : answer);
      if (body) this.reader?.answerIds(body, parse, this.ids);
      else if (delivered && this.reader && copy && !copy.whole) this.log.warn({ status }, 'passed-through answer\'s owner not recorded: the answer is too large to read its ids from');
      response = this.plan ? parse() : null;
    }
    // Every id the client saw is the caller's, however the stream ended (it may name them later):
    // as it saw them, the key masked (the ledger is not sealed, and holds no host key in the clear).
    if (this.ids.size > 0) this.codec.ownership!.claim(keepOut ? [...this.ids].map((id) => keepOut.text(id)) : [...this.ids], this.principal);
    if (this.plan && delivered && status === 200 && isObject(response)) this.codec.state!.rememberForwarded!(this.plan, response, this.principal, keepOut);
  }
}

function parsedAnswer(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}
