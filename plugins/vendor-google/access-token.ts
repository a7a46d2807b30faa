// OAuth access tokens for Vertex AI, from google-auth-library: a service-account JSON key (the
// host key's value) signs a JWT assertion that Google's token endpoint exchanges for a token, or
// workload identity (Google's application default credentials of the machine). The library
// caches each token and refreshes it before it expires; `invalidate` drops a token Vertex
// refused (revoked, or a clock that disagrees) so the next call fetches a new one.
import { createHash } from 'node:crypto';
import type { gaxios } from 'google-auth-library';

type GoogleAuthLibrary = typeof import('google-auth-library');
// Loaded on the first token a Vertex host needs (~15 MB a Relay without such a host never uses).
let library: Promise<GoogleAuthLibrary> | null = null;
const loadLibrary = (): Promise<GoogleAuthLibrary> => (library ??= import('google-auth-library'));
import type { VertexOptions } from './host-options.ts';

const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const TOKEN_TIMEOUT_MS = 10_000;
// A token answer is well under 4 KiB; more is read no further.
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;
// Clients kept per service-account key; a rotated key's client is dropped oldest first.
const MAX_CLIENTS = 256;

/** A token, or why Google refused to issue one (said without the key: safe to show). */
export type TokenResult = { ok: true; token: string } | { ok: false; message: string };

interface TokenSource {
  getAccessToken(): Promise<{ token?: string | null }>;
}

/** The parts of a service-account key the JWT needs; the key itself never goes into a message. */
function parseServiceAccount(credential: string): { email: string; key: string } | string {
  let json: unknown;
  try {
    json = JSON.parse(credential);
  } catch {
    return 'the host key is not a service-account JSON key (it is not JSON)';
  }
  const sa = json as { type?: unknown; client_email?: unknown; private_key?: unknown } | null;
  if (sa === null || typeof sa !== 'object' || Array.isArray(sa)) return 'the host key is not a service-account JSON key (not a JSON object)';
  if (sa.type !== undefined && sa.type !== 'service_account') return `the host key is a "${String(sa.type).slice(0, 40)}" credential, not a service-account key`;
  if (typeof sa.client_email !== 'string' || sa.client_email === '') return 'the service-account key has no client_email';
  if (typeof sa.private_key !== 'string' || sa.private_key === '') return 'the service-account key has no private_key';
  return { email: sa.client_email, key: sa.private_key };
}

/** fetch with the answer's body cut off past MAX_TOKEN_ANSWER_BYTES (the library would read it all). */
async function boundedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await fetch(input, init);
  if (!res.body) return res;
  let read = 0;
  const bounded = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      read += chunk.byteLength;
      if (read > MAX_TOKEN_ANSWER_BYTES) controller.error(new TokenEndpointFailure(`answered more than ${MAX_TOKEN_ANSWER_BYTES / 1024} KiB`));
      else controller.enqueue(chunk);
    },
  }));
  return new Response(bounded, { status: res.status, statusText: res.statusText, headers: res.headers });
}

/** The token endpoint failed (unreachable, a 5xx, an answer past the bound): said without its body. */
export class TokenEndpointFailure extends Error {
  constructor(what: string) {
    super(`Google's token endpoint ${what}`);
    this.name = 'TokenEndpointFailure';
  }
}

/** Why the token endpoint failed, from the library's error, in a few words (never the answer's text). */
function failureOf(err: unknown): TokenEndpointFailure {
  if (err instanceof TokenEndpointFailure) return err;
  const e = err as { status?: unknown; response?: { status?: unknown }; code?: unknown; cause?: unknown } | null;
  const status = e?.response?.status ?? e?.status;
  if (typeof status === 'number') return new TokenEndpointFailure(`answered HTTP ${status}`);
  if (e?.cause instanceof TokenEndpointFailure) return e.cause;
  const code = typeof e?.code === 'string' && /^[A-Za-z_]{1,40}$/.test(e.code) ? e.code : 'no answer';
  return new TokenEndpointFailure(`could not be reached (${code})`);
}

/** A transport for the library: the token endpoint replaced when configured, one retry, a timeout, a bounded answer. */
function transporterFor(lib: GoogleAuthLibrary, tokenUrl: string | undefined): InstanceType<typeof gaxios.Gaxios> {
  const transporter = new lib.gaxios.Gaxios();
  transporter.interceptors.request.add({
    resolved: (opts) => {
      if (tokenUrl && [GOOGLE_TOKEN_URL].includes(String(opts.url))) opts.url = new URL(tokenUrl); // the test's token endpoint
      opts.timeout = TOKEN_TIMEOUT_MS;
      opts.fetchImplementation = boundedFetch;
      if (opts.retryConfig) opts.retryConfig = { ...opts.retryConfig, retry: 1 };
      return Promise.resolve(opts);
    },
  });
  return transporter;
}

/** Google's refusal (an OAuth error body), or null when the token endpoint was not reached. */
function refusalOf(err: unknown): string | null {
  const e = err as { response?: { status?: number; data?: { error?: unknown; error_description?: unknown } }; message?: unknown };
  const status = e?.response?.status;
  if (typeof status !== 'number' || status >= 500) return null;
  const data = e.response?.data;
  const what = [data?.error, data?.error_description].filter((s) => typeof s === 'string' && s !== '').join(': ');
  return `Google's token endpoint refused the service account (HTTP ${status}${what ? `, ${what.slice(0, 300)}` : ''})`;
}

export class VertexTokens {
  private readonly clients = new Map<string, TokenSource>();
  private workloadIdentity: TokenSource | null = null;

  /** `allowWorkloadIdentity`: the plugin's option, checked here too for hosts written before it was turned off. */
  constructor(private readonly allowWorkloadIdentity = false) {}

  private cacheKey(credential: string, options: VertexOptions): string {
    return `${createHash('sha256').update(credential).digest('hex')} ${options.tokenUrl ?? ''}`;
  }

  private sourceFor(lib: GoogleAuthLibrary, credential: string | null, options: VertexOptions): TokenSource | string {
    if (options.auth === 'workload-identity') {
      if (!this.allowWorkloadIdentity) return "workload identity is off (the vendor-google option workloadIdentity)";
      if (!this.workloadIdentity) {
        const auth = new lib.GoogleAuth({ scopes: [CLOUD_PLATFORM] });
        this.workloadIdentity = { getAccessToken: async () => ({ token: await auth.getAccessToken() }) };
      }
      return this.workloadIdentity;
    }
    if (credential === null) return 'no service-account key (the host has no host key)';
    const id = this.cacheKey(credential, options);
    const cached = this.clients.get(id);
    if (cached) return cached;
    const sa = parseServiceAccount(credential);
    if (typeof sa === 'string') return sa;
    const client = new lib.JWT({ email: sa.email, key: sa.key, scopes: [CLOUD_PLATFORM], transporter: transporterFor(lib, options.tokenUrl) });
    if (this.clients.size >= MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
    this.clients.set(id, client);
    return client;
  }

  /** A valid token (cached until it nears expiry), a refusal, or a TokenEndpointFailure when Google is unreachable. */
  async token(credential: string | null, options: VertexOptions): Promise<TokenResult> {
    const source = this.sourceFor(await loadLibrary(), credential, options);
    if (typeof source === 'string') return { ok: false, message: source };
    try {
      const { token } = await source.getAccessToken();
      if (!token) return { ok: false, message: "Google's token endpoint answered without an access token" };
      return { ok: true, token };
    } catch (err) {
      if (options.auth === 'workload-identity') return { ok: false, message: `workload identity gave no token: ${String((err as Error)?.message).slice(0, 300)}` };
      const refusal = refusalOf(err);
      if (refusal === null) throw failureOf(err);
      if (credential !== null) this.clients.delete(this.cacheKey(credential, options));
      return { ok: false, message: refusal };
    }
  }

  /** Forgets the cached token of this key, so the next `token` call fetches a new one. */
  invalidate(credential: string | null, options: VertexOptions): void {
    if (options.auth === 'workload-identity') this.workloadIdentity = null;
    else if (credential !== null) this.clients.delete(this.cacheKey(credential, options));
  }
}
