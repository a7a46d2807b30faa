// Whether a request asks for reasoning: an encoder that sends none names `reasoning` as dropped.
import type { CanonicalRequest } from './types.ts';

/** An effort of none or a budget of 0 asks for none. */
export function asksReasoning(request: CanonicalRequest): boolean {
  const r = request.reasoning;
  return r !== undefined && r.effort !== 'none' && r.budget_tokens !== 0;
}
