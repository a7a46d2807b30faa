// POSTs an alert to a webhook, retried with exponential backoff. A 2xx is delivered; a network
// error, a timeout, a 408, 429 or 5xx is retried; another 4xx fails at once (the webhook refuses
// it; asking again will not help). Errors name a status or an error code, never the URL (it may
// hold a secret). Redirects are not followed.

export interface DeliveryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the second attempt; doubled before each next one. */
  retryBaseMs: number;
  /** Most one attempt may take. */
  timeoutMs: number;
}

export interface DeliveryResult {
  ok: boolean;
  attempts: number;
  error: string | null;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

async function attempt(url: string, body: string, timeoutMs: number): Promise<{ ok: boolean; retry: boolean; error: string | null }> {
  try {
    const res = await fetch(url, {
      method: 'POST', body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs),
      headers: { 'content-type': 'application/json', 'user-agent': 'relay-budget-alerts' },
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true, retry: false, error: null };
    const retry = res.status >= 500 || res.status === 408 || res.status === 429;
    return { ok: false, retry, error: `HTTP ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { ok: false, retry: true, error: `no answer within ${timeoutMs} ms` };
    return { ok: false, retry: true, error: `connection failed${e.cause?.code ? ` (${e.cause.code})` : ''}` };
  }
}

export async function deliverWebhook(url: string, payload: unknown, options: DeliveryOptions): Promise<DeliveryResult> {
  const body = JSON.stringify(payload);
  let last: string | null = null;
  for (let n = 1; n <= options.attempts; n++) {
    const result = await attempt(url, body, options.timeoutMs);
    if (result.ok) return { ok: true, attempts: n, error: null };
    last = result.error;
    if (!result.retry || n === options.attempts) return { ok: false, attempts: n, error: last };
    await sleep(options.retryBaseMs * 2 ** (n - 1));
  }
  return { ok: false, attempts: options.attempts, error: last };
}

/** What a webhook's URL may show: its origin (scheme, host, port). */
export function webhookTarget(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(not a URL)';
  }
}
