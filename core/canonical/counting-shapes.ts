// The token-counting shapes: a counting request is translated only to another counter, never
// to a generation (which would answer a count by spending tokens).
import type { ShapeId } from '../hooks.ts';

export const COUNTING_SHAPES: readonly ShapeId[] = ['anthropic.count_tokens', 'openai.input_tokens'];

/** Whether `inbound` may be translated to `upstream`: counting to counting, generation to generation. */
export function sameKindOfShape(inbound: ShapeId, upstream: ShapeId): boolean {
  return COUNTING_SHAPES.includes(inbound) === COUNTING_SHAPES.includes(upstream);
}
