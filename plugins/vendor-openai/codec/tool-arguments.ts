// A tool call's arguments (Chat's function.arguments and custom.input, Responses' arguments and
// input) as canonical text, whole or streamed: some servers send an object where OpenAI sends text.
import { nameKind } from './answer-names.ts';

/** A tool call's arguments as text: a string as is, an object as its JSON; anything else is named `tool_call.arguments` (absent is empty). */
export function toolArgumentsText(args: unknown, dropped: string[]): string {
  if (typeof args === 'string') return args;
  if (args === undefined || args === null) return '';
  if (typeof args === 'object') return JSON.stringify(args);
  nameKind('tool_call.arguments', dropped);
  return '';
}
