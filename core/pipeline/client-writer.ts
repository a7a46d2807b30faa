// Writes a committed response to the client: head once, then chunks with backpressure.
import type { ServerResponse } from 'node:http';
import { connectionListed } from '../http/headers.ts';
import { CredentialScrubber, HostKeyMask, type HostSecrets } from './credential-scrub.ts';

// Upstream headers never copied to the client: hop-by-hop ones (and those the upstream's
// Connection header names), ones Node sets itself, x-request-id and x-relay-* (Relay's own to
// say), cookies (an upstream's session is not the caller's to hold), and what speaks for the
// origin that sent it (HSTS, alt-svc), which would speak for Relay's. content-encoding stays: it
// describes the bytes, which pass unchanged.
const SKIP = new Set([
  'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection', 'proxy-authenticate',
  'date', 'x-request-id', 'set-cookie', 'set-cookie2', 'strict-transport-security', 'alt-svc',
]);
/** Relay's own headers: an upstream's are not passed on, so one can never pose as Relay's. */
const RELAY_PREFIX = 'x-relay-';
/** server.writeStallTimeoutMs's default (the config schema reads it from here). */
export const DEFAULT_STALL_MS = 30_000;
/** Which vendor account answered: the host key's, the operator's to know, not every caller's (proxy mode: the caller's own, kept). */
const ACCOUNT = new Set(['openai-organization', 'openai-project', 'anthropic-organization-id']);

export class ClientWriter {
  private committed = false;
  private wroteBody = false;
  /** The head sent (for payload capture; res.getHeaders() does not see what writeHead was given). */
  sentHeaders: Record<string, string | string[]> = {};
  /** The catalog model answering (x-relay-served-model), set before each model is tried. */
  servedModel: string | null = null;
  /** What a passed-through request left out (x-relay-dropped), set for the route that answers. */
  dropped: string | null = null;
  /** `standard` when the policy ran a fast-mode request at the standard speed (x-relay-fast-mode). */
  fastMode: 'standard' | null = null;
  /** Takes the answering route's host key out of what is written (credential-scrub.ts); null for none. */
  private scrubber: CredentialScrubber | null = null;
  /** The host key kept out (keepOut), for what Relay keeps of the answer (keyMask). */
  private keptOut: string | null = null;
  /** The answering host's header values kept out with it (keepOut). */
  private hostSecrets: HostSecrets | null = null;
  /** True once the answer was cut because the client stopped reading it (stallMs). */
  stalled = false;

  /**
   * `stallMs`: how long a write may wait for a client that stopped reading (a full socket) before
   * the answer is cut, so a caller cannot hold an upstream connection by not reading.
   */
  constructor(
    private readonly raw: ServerResponse,
    private readonly requestId: string,
    private readonly onFirstByte: () => void,
    private readonly tap?: (chunk: Buffer) => void,
    private readonly stallMs = DEFAULT_STALL_MS,
  ) {}

  get isCommitted(): boolean {
    return this.committed;
  }

  /** True once the client went away. */
  get clientGone(): boolean {
    return this.raw.destroyed || this.raw.writableEnded && !this.committed;
  }

  /**
   * Sends status and headers. Upstream headers pass, minus hop-by-hop and x-relay-* (and the
   * vendor account's ids when the answer is to Relay's host key), the kept-out secrets masked in
   * their values (keepOut, called first); Relay's own are added. `relayMade`: the headers are Relay's (a translated answer's), x-relay-* included.
   */
  commit(status: number, upstreamHeaders: Record<string, string | string[] | undefined>, keepLength: boolean, relayMade = false): void {
    if (this.committed) return;
    this.committed = true;
    const headers: Record<string, string | string[]> = {};
    const listed = connectionListed(upstreamHeaders);
    const mask = this.keptOut !== null || this.hostSecrets !== null ? this.keyMask : null;
    for (const name in upstreamHeaders) {
      const value = upstreamHeaders[name];
      if (value === undefined || SKIP.has(name) || listed?.has(name) || (!keepLength && name === 'content-length') || (!relayMade && name.startsWith(RELAY_PREFIX))) continue;
      if (this.keptOut !== null && ACCOUNT.has(name)) continue;
      headers[name] = mask === null ? value : maskedHeader(value, mask);
    }
    headers['x-request-id'] = this.requestId;
    if (this.servedModel !== null) headers['x-relay-served-model'] = this.servedModel;
    if (this.dropped !== null) headers['x-relay-dropped'] = this.dropped;
    if (this.fastMode !== null) headers['x-relay-fast-mode'] = this.fastMode;
    this.sentHeaders = headers;
    // Not flushed here: Node sends the head with the first body write, one syscall instead of two.
    this.raw.writeHead(status, headers);
  }

  /**
   * The host key the answer is to Relay's (null: the caller's own credential, or none) and the
   * answering host's header values (sendable-host.ts, in proxy mode too): never written to the caller.
   */
  keepOut(credential: string | null, host: HostSecrets | null = null): void {
    if (this.committed) return;
    this.scrubber = CredentialScrubber.of(credential, host);
    this.keptOut = credential;
    this.hostSecrets = host;
  }

  /** What masks the same secrets out of what Relay keeps of the answer (a stored response); null for none. */
  get keyMask(): HostKeyMask | null {
    return HostKeyMask.of(this.keptOut, this.hostSecrets);
  }

  /** Sends the head now if no body byte went yet (a stream whose first frame is still to come). */
  flush(): void {
    if (!this.wroteBody && !this.raw.destroyed) this.raw.flushHeaders();
  }

  /**
   * Writes a chunk. Returns a promise only when the socket is full (resolves on drain): callers
   * await just then, which saves a microtask per chunk on the usual path.
   */
  write(chunk: Buffer | string): Promise<void> | undefined {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    return this.send(this.scrubber ? this.scrubber.push(buf) : buf);
  }

  private send(buf: Buffer): Promise<void> | undefined {
    // A client that left gets nothing more; its close event aborts the upstream.
    if (buf.length === 0 || this.raw.destroyed) return undefined;
    this.wroteBody = true;
    this.onFirstByte();
    this.tap?.(buf);
    return this.raw.write(buf) ? undefined : this.waitForDrain();
  }

  /** Resolves on drain, or on close (a closed response emits neither again); cuts the answer after stallMs. */
  private waitForDrain(): Promise<void> {
    const raw = this.raw;
    if (raw.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.stalled = true;
        // Its close event aborts the upstream call, as when the client leaves.
        raw.destroy();
      }, this.stallMs);
      const done = () => {
        clearTimeout(timer);
        raw.off('drain', done);
        raw.off('close', done);
        resolve();
      };
      raw.once('drain', done);
      raw.once('close', done);
    });
  }

  /** Trailers sent after the last chunk (only a chunked response carries them; others drop them). */
  trailers(headers: Record<string, string>): void {
    if (!this.raw.writableEnded && !this.raw.destroyed) this.raw.addTrailers(headers);
  }

  end(): void {
    if (this.raw.writableEnded) return;
    // What the scrubber held back was not the key after all (the answer ended first).
    if (this.scrubber) void this.send(this.scrubber.end());
    this.raw.end();
  }

  /** Cuts the response (the client sees a truncated body / aborted stream). */
  cut(): void {
    this.raw.destroy();
  }
}

/** An upstream may quote the key in a header (an echo, a WWW-Authenticate realm) as in its body. */
function maskedHeader(value: string | string[], mask: HostKeyMask): string | string[] {
  return typeof value === 'string' ? mask.text(value) : value.map((v) => mask.text(v));
}
