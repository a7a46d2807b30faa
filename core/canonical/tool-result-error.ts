// A tool result's is_error for an upstream whose tool outputs have no error flag (OpenAI Chat and
// Responses): the flag becomes a marker at the start of the output's text, so the model still
// reads that the call failed.
import type { ToolResultPart } from './types.ts';

export const TOOL_ERROR_MARKER = 'Error: ';

/** The result's content, with the error marker in front when is_error is set. */
export function markedToolResultContent(result: ToolResultPart): ToolResultPart['content'] {
  if (result.is_error !== true) return result.content;
  const [first, ...rest] = result.content;
  if (first?.type === 'text') return [{ type: 'text', text: TOOL_ERROR_MARKER + first.text }, ...rest];
  return [{ type: 'text', text: TOOL_ERROR_MARKER.trimEnd() }, ...result.content];
}
