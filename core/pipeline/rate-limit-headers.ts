// The upstream's rate-limit headers on a translated answer, in the client's vendor's names: a
// client that paces itself by them (SDKs, agents) must see the same limits whatever upstream
// served it. OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` and Anthropic's
// `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}` name the same concepts; OpenAI's
// reset is a duration ("6m0s", "20ms"), Anthropic's an RFC 3339 time. Anthropic's input- and
// output-token limits have no OpenAI name and are left out for an OpenAI client. `retry-after`
// always passes. A client of the same vendor, or of the canonical shape, gets the headers as sent.
import type { ShapeId } from '../hooks.ts';

type Vendor = 'openai' | 'anthropic';
type Headers = Record<string, string | string[] | undefined>;

const OPENAI_PREFIX = 'x-ratelimit-';
const ANTHROPIC_PREFIX = 'anthropic-ratelimit-';
const KINDS = ['requests', 'tokens'] as const;
const FIELDS = ['limit', 'remaining', 'reset'] as const;

const openaiName = (kind: string, field: string) => `${OPENAI_PREFIX}${field}-${kind}`;
const anthropicName = (kind: string, field: string) => `${ANTHROPIC_PREFIX}${kind}-${field}`;

const NONE: Readonly<Record<string, string>> = Object.freeze({});

function vendorOf(shape: ShapeId): Vendor | null {
  if (shape.startsWith('openai.')) return 'openai';
  if (shape.startsWith('anthropic.')) return 'anthropic';
  return null;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** OpenAI's reset ("1m30.5s", "6ms") in milliseconds, or null when it is not one. */
export function parseResetDuration(text: string): number | null {
  if (!DURATION.test(text)) return null;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) ms += Number(amount) * UNIT_MS[unit!]!;
  return ms;
}

/** Milliseconds as OpenAI writes a reset: "20ms" under a second, else "1h2m3.5s" (Go's form). */
export function formatResetDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1000) return `${whole}ms`;
  const h = Math.floor(whole / 3_600_000);
  const m = Math.floor((whole % 3_600_000) / 60_000);
  const s = (whole % 60_000) / 1000;
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

function resetToAnthropic(openai: string, now: number): string | undefined {
  const ms = parseResetDuration(openai);
  if (ms === null) return undefined;
  // Anthropic writes whole seconds; rounding up never tells a client it may go early.
  return new Date(Math.ceil((now + ms) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function resetToOpenAI(anthropic: string, now: number): string | undefined {
  const at = Date.parse(anthropic);
  return Number.isFinite(at) ? formatResetDuration(at - now) : undefined;
}

/** The rate-limit headers (and retry-after) of an upstream answer in `upstreamShape`, for a client of `clientShape`. */
export function clientRateLimitHeaders(upstream: Headers, upstreamShape: ShapeId, clientShape: ShapeId, now = Date.now()): Record<string, string> {
  let out: Record<string, string> | null = null;
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== '') (out ??= {})[name] = value;
  };
  set('retry-after', single(upstream['retry-after']));
  const from = vendorOf(upstreamShape);
  const to = vendorOf(clientShape);
  if (from === null || to === null || from === to) {
    for (const name of Object.keys(upstream)) {
      if (name.startsWith(OPENAI_PREFIX) || name.startsWith(ANTHROPIC_PREFIX)) set(name, single(upstream[name]));
    }
    return out ?? NONE;
  }
  for (const kind of KINDS) {
    for (const field of FIELDS) {
      const source = single(upstream[from === 'openai' ? openaiName(kind, field) : anthropicName(kind, field)]);
      if (source === undefined) continue;
      const value = field !== 'reset' ? source : to === 'anthropic' ? resetToAnthropic(source, now) : resetToOpenAI(source, now);
      set(to === 'anthropic' ? anthropicName(kind, field) : openaiName(kind, field), value);
    }
  }
  return out ?? NONE;
}
