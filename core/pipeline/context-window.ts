// Context-window routing (issue 42 item 3): whether a request's prompt is clearly over a model's
// window (spec.contextWindow, else the shipped table's, core/context-windows) before it is sent,
// from the body's size alone (no tokenizer, no parse).
import type { Model } from '../catalog/kinds.ts';
import { effectiveWindow } from '../context-windows/lookup.ts';

/** English text and JSON run near 4 bytes a token in every vendor's tokenizer. */
export const BYTES_PER_TOKEN = 4;
/**
 * A body's bytes/4 counts its JSON punctuation and member names as tokens too, so it overestimates;
 * only an estimate this far over the window routes away, and nearer ones are the upstream's to
 * refuse (its context-length error then moves to the next fallback as well).
 */
export const OVER_WINDOW_MARGIN = 1.1;

export function estimatedPromptTokens(bodyBytes: number): number {
  return Math.ceil(bodyBytes / BYTES_PER_TOKEN);
}

/** True when the model has a context window and the body's estimate is clearly over it. */
export function clearlyOverWindow(model: Model | undefined, bodyBytes: number): boolean {
  const window = effectiveWindow(model);
  return window !== null && estimatedPromptTokens(bodyBytes) > window.tokens * OVER_WINDOW_MARGIN;
}
