// The hook registry plugins fill at registration time and the pipeline reads per request.
import type { Authenticator, InboundCodec, ModelResolver, Recorder, RequestTracer, ShapeId, VendorAdapter } from '../hooks.ts';
import type { PayloadBackend, UsageBackend } from '../observer/types.ts';
import type { HookRegistry } from './context.ts';

/** The parts of the observer the registry hands backends and recorders to. */
export interface BackendSink {
  addUsageBackend(backend: UsageBackend): void;
  addPayloadBackend(backend: PayloadBackend): void;
  addRecorder(name: string, fn: Recorder): void;
}

export class Hooks implements HookRegistry {
  /** Ordered authentication chain. */
  authenticators: Array<{ name: string; fn: Authenticator; order: number }> = [];
  resolver: ModelResolver | null = null;
  readonly adapters = new Map<string, VendorAdapter>();
  readonly codecs = new Map<ShapeId, InboundCodec>();
  /** Null unless a plugin traces requests: the pipeline then skips every tracing step. */
  tracer: RequestTracer | null = null;

  constructor(private readonly sink: BackendSink) {}

  addAuthenticator(name: string, fn: Authenticator, order = 100): void {
    this.authenticators = [...this.authenticators, { name, fn, order }].sort((a, b) => a.order - b.order);
  }

  setModelResolver(fn: ModelResolver): void {
    this.resolver = fn;
  }

  addVendorAdapter(adapter: VendorAdapter): void {
    if (this.adapters.has(adapter.id)) throw new Error(`a vendor adapter with id "${adapter.id}" is already registered`);
    this.adapters.set(adapter.id, adapter);
  }

  vendorAdapter(id: string): VendorAdapter | undefined {
    return this.adapters.get(id);
  }

  addInboundCodec(codec: InboundCodec): void {
    if (this.codecs.has(codec.shape)) throw new Error(`an inbound codec for shape "${codec.shape}" is already registered`);
    this.codecs.set(codec.shape, codec);
  }

  addUsageBackend(backend: UsageBackend): void {
    this.sink.addUsageBackend(backend);
  }

  addPayloadBackend(backend: PayloadBackend): void {
    this.sink.addPayloadBackend(backend);
  }

  onRecord(name: string, fn: Recorder): void {
    this.sink.addRecorder(name, fn);
  }

  setRequestTracer(tracer: RequestTracer): void {
    if (this.tracer) throw new Error('a request tracer is already registered');
    this.tracer = tracer;
  }
}
