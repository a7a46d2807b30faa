// Microsoft Entra ID client credentials: the host key is the app's client secret, exchanged at
// the tenant's token endpoint for a bearer token. Tokens are cached per (endpoint, client,
// secret) and fetched again before they expire; concurrent requests share one fetch.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readUpstreamBody, sendUpstream, type UpstreamRequest } from '../../core/plugin-api.ts';
import { DEFAULT_ENTRA_SCOPE, type EntraOptions } from './host-options.ts';

/** Refresh this long before expiry (or at half the lifetime of a short-lived token). */
const REFRESH_MARGIN_MS = 5 * 60_000;
const MAX_TOKEN_RESPONSE = 64 * 1024;

export interface TokenRefusal {
  status: number;
  /** The token endpoint's own explanation (error and error_description), never the secret. */
  message: string;
}

export type TokenResult = { token: string; cached: boolean } | { refused: TokenRefusal };

interface Entry {
  token: string;
  refreshAt: number;
}

export function tokenUrlOf(entra: EntraOptions): string {
  return entra.tokenUrl ?? `https://login.microsoftonline.com/${encodeURIComponent(entra.tenantId)}/oauth2/v2.0/token`;
}

export class EntraTokenCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<TokenResult>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A token for this host and secret: the cached one while fresh, else a new one. */
  async token(req: UpstreamRequest, entra: EntraOptions, secret: string): Promise<TokenResult> {
    const key = cacheKey(entra, secret);
    const entry = this.entries.get(key);
    if (entry && this.now() < entry.refreshAt) return { token: entry.token, cached: true };
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetchToken(req, entra, secret, key).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  /** Forgets a token the upstream refused (expired early, revoked), so the next call fetches one. */
  forget(entra: EntraOptions, secret: string, token: string): void {
    const key = cacheKey(entra, secret);
    const cached = this.entries.get(key)?.token;
    if (cached !== undefined && sameText(cached, token)) this.entries.delete(key);
  }

  private async fetchToken(req: UpstreamRequest, entra: EntraOptions, secret: string, key: string): Promise<TokenResult> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: entra.clientId, client_secret: secret, scope: entra.scope ?? DEFAULT_ENTRA_SCOPE });
    const res = await sendUpstream(req, tokenUrlOf(entra), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      timeoutMs: req.route.host.spec.timeoutMs,
    });
    const text = (await readUpstreamBody(res.body, MAX_TOKEN_RESPONSE)).bytes.toString('utf8');
    let json: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      // not JSON: reported below without its text (it could echo the form)
    }
    if (res.status !== 200 || typeof json.access_token !== 'string' || json.access_token === '') {
      const what = [json.error, json.error_description].filter((v) => typeof v === 'string').join(': ');
      return { refused: { status: res.status === 200 ? 502 : res.status, message: `Microsoft Entra ID refused the client credentials${what ? ` (${what})` : ` (HTTP ${res.status})`}` } };
    }
    const lifetimeMs = Math.max(0, Number(json.expires_in) || 0) * 1000;
    const refreshAt = this.now() + Math.max(0, lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2));
    this.entries.set(key, { token: json.access_token, refreshAt });
    return { token: json.access_token, cached: false };
  }
}

function cacheKey(entra: EntraOptions, secret: string): string {
  // The secret is hashed so the map never holds it in the clear.
  const digest = createHash('sha256').update(secret).digest('base64url');
  return `${tokenUrlOf(entra)}\n${entra.clientId}\n${entra.scope ?? DEFAULT_ENTRA_SCOPE}\n${digest}`;
}

/** Two secrets compared in constant time. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
