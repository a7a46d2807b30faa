// What the answer decoders name in x-relay-dropped, and the annotations they map to citations.
import type { Citation } from '../../../core/plugin-api/canonical.ts';
import { citationFromAnnotation } from './web-search.ts';

/** The name of a tool call's arguments (or custom input) that are neither text, an object nor absent. */
export const TOOL_ARGUMENTS_NAME = 'tool_call.arguments';

/** Names a kind the decoders have no canonical part for, once. */
export function nameKind(kind: unknown, dropped: string[]): void {
  if (typeof kind === 'string' && !dropped.includes(kind)) dropped.push(kind);
}

/** A text's url_citation annotations as canonical citations; the other kinds are named. */
export function citationsOf(annotations: unknown, text: string | undefined, dropped: string[]): Citation[] {
  if (!Array.isArray(annotations)) return [];
  return annotations.flatMap((a) => {
    const citation = citationFromAnnotation(a, text);
    if (!citation) nameKind((a as { type?: unknown } | null)?.type, dropped);
    return citation ? [citation] : [];
  });
}
