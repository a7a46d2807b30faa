// A request body as the chunks the socket delivered it in, joined into one Buffer only when
// something asks for one. Passthrough never does: the scan copies the chunks into its own memory
// and the upstream write sends them as they are (one writev). A coding agent's turn (~400 KB)
// arrives in some eight reads; joining them was a second 400 KB allocation outside V8's heap per
// turn, and that memory, not the heap, is what started its full collections (one every ~80 ms).
// Measured: one more such allocation and copy per turn cost the agent turn 13.6% of its
// throughput (`npm run bench:compare`, 16 connections, 10 rounds).

/** A body as its parts, in order; `length` bytes in all. */
export class BodyBytes {
  private chunks: readonly Buffer[];
  private released = false;

  constructor(parts: readonly Buffer[], readonly length: number) {
    this.chunks = parts;
  }

  static of(body: Buffer): BodyBytes {
    return new BodyBytes([body], body.length);
  }

  /** The parts as they stand: one Buffer once joined, none for an empty body. */
  get parts(): readonly Buffer[] {
    if (this.released) throw new Error('the request body was let go once its answer began (BodyBytes.release)');
    return this.chunks;
  }

  /** The body as one Buffer: the parts joined on the first call (a copy), kept from then on. */
  joined(): Buffer {
    const parts = this.parts;
    if (parts.length === 1) return parts[0]!;
    const one = parts.length === 0 ? Buffer.alloc(0) : Buffer.concat(parts, this.length);
    this.chunks = [one];
    return one;
  }

  /**
   * Lets go of the parts. The pipeline calls it at the answer's first byte, after which nothing is
   * sent again: an agent's stream lasts seconds to minutes, and its turn's body (hundreds of KB)
   * would stay in memory as long. Reading the body afterwards (parts, joined) throws.
   */
  release(): void {
    this.released = true;
    this.chunks = [];
  }
}

/** The body of an inference call: the inference routes' own parts, or any other call's `body` as one part. */
export function bytesOf(call: { readonly body: Buffer }): BodyBytes {
  const bytes = (call as { readonly bytes?: unknown }).bytes;
  return bytes instanceof BodyBytes ? bytes : BodyBytes.of(call.body);
}

/** A request's `body` as an adapter may read, write or spread it. */
interface HasBody {
  body: Buffer | string;
}

const wireBodies = new WeakMap<object, BodyBytes>();

/**
 * Gives `request` the body `bytes`: a plain Buffer when it is one part (or none); otherwise an own,
 * enumerable `body` that joins the parts when read (so `{ ...request }` copies the whole body) and
 * that an adapter may assign, while sendToHost writes the parts themselves (wireBody).
 */
export function attachBody(request: HasBody, bytes: BodyBytes): void {
  if (bytes.parts.length <= 1) {
    request.body = bytes.joined();
    return;
  }
  wireBodies.set(request, bytes);
  let assigned: Buffer | string | undefined;
  Object.defineProperty(request, 'body', {
    enumerable: true,
    configurable: true,
    get: () => assigned ?? bytes.joined(),
    set: (value: Buffer | string) => {
      assigned = value;
      wireBodies.delete(request);
    },
  });
}

/** What to write for `request`'s body: the parts attachBody gave it (unless replaced since), else its body. */
export function wireBody(request: HasBody): Buffer | string | readonly Buffer[] {
  const bytes = wireBodies.get(request);
  return bytes ? bytes.parts : request.body;
}

/** Length in bytes of a body as SendOptions carries it. */
export function wireLength(body: Buffer | string | readonly Buffer[]): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (Buffer.isBuffer(body)) return body.length;
  let n = 0;
  for (const part of body) n += part.length;
  return n;
}
