// Exact prompt counting near a model's context window (issue 42 item 3): when the bytes/4 estimate
// (context-window.ts) puts a prompt near the window, the first route's vendor count endpoint
// (VendorAdapter.countTokens, e.g. Anthropic's count_tokens) says whether it fits. Any failure or
// slowness of the count leaves the decision to the upstream, as without it; a host that lately
// answered its counter as missing is not asked (missing-counters.ts).
import type { Model } from '../catalog/kinds.ts';
import type { InboundCodec, Route } from '../hooks.ts';
import type { Attempt } from './attempt.ts';
import type { CredentialResolver } from './credentials.ts';
import { estimatedPromptTokens } from './context-window.ts';
import { effectiveWindow } from '../context-windows/lookup.ts';
import { canonicalPrompt, type TranslationSource } from './translation-source.ts';
import type { MissingCounters } from './missing-counters.ts';

/** An estimate at or above this share of the window (and not clearly over it) is counted exactly. */
export const NEAR_WINDOW_SHARE = 0.8;
/** The count is worth this much of the request's time at most. */
export const COUNT_TIMEOUT_MS = 2_000;

export function nearWindow(model: Model | undefined, bodyBytes: number): boolean {
  const window = effectiveWindow(model);
  return window !== null && estimatedPromptTokens(bodyBytes) >= window.tokens * NEAR_WINDOW_SHARE;
}

/** True when the route's vendor counts the prompt over `window`; false when it fits or cannot be counted. */
export async function countedOverWindow(
  attempt: Attempt, route: Route, credentials: CredentialResolver, codec: InboundCodec | undefined, translation: TranslationSource | null, window: number,
  counters: MissingCounters,
): Promise<boolean> {
  const adapter = route.adapter;
  if (!adapter.countTokens || !route.hostKey || counters.missing(route)) return false;
  const credential = credentials.resolve(route.hostKey);
  if ('error' in credential) return false;
  const { call } = attempt;
  let shape: string;
  let body: string;
  try {
    if (route.shapes.includes(call.shape)) {
      shape = call.shape;
      body = JSON.stringify({ ...call.json(), model: route.upstreamModel });
    } else {
      const upstreamShape = codec && translation ? adapter.translationShape(route.shapes, call.shape) : null;
      if (!upstreamShape) return false;
      shape = upstreamShape;
      body = JSON.stringify(adapter.encodeRequest(upstreamShape, translation!.routed(route, false), route));
    }
  } catch {
    return false;
  }
  const req = attempt.upstreamRequest({ route, shape, body, headers: { 'content-type': 'application/json' }, credential: credential.value, stream: false });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), COUNT_TIMEOUT_MS); });
  try {
    const counted = await Promise.race([adapter.countTokens(counters.watched(req), canonicalPrompt(route, call, codec, translation)).catch(() => null), late]);
    return counted !== null && counted > window;
  } finally {
    clearTimeout(timer);
  }
}
