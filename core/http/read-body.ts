// Reading an upstream body whole, with a bound. Error answers, token counts and non-streamed
// answers that must be parsed are read whole; an upstream that never stops sending would otherwise
// fill the process's memory (the body deadline is between chunks, and a steady sender meets it).

export interface BoundedBody {
  /** The body, or its first maxBytes when it was longer. */
  bytes: Buffer;
  /** True when the body was longer than maxBytes: the rest was not read, and the request was aborted. */
  truncated: boolean;
}

/** Reads `body` up to `maxBytes`; past that it stops reading and aborts the upstream request. */
export async function readUpstreamBody(body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown }, maxBytes: number): Promise<BoundedBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - size));
      body.destroy();
      return { bytes: Buffer.concat(chunks, maxBytes), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks, size), truncated: false };
}
