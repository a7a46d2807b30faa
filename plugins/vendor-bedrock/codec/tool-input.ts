// A toolUse's input as tool-call arguments text, for whole answers and streamed deltas alike:
// Converse sends text in deltas and usually an object in answers, but either may come as the other.
import { nameDropped } from './answer-parts.ts';

/** Text as it is (never encoded again); an object (or array) as its JSON; nothing as ''; anything else named `toolUse.input` and ''. */
export function toolInputText(input: unknown, dropped: string[]): string {
  if (typeof input === 'string') return input;
  if (input === undefined || input === null) return '';
  if (typeof input === 'object') return JSON.stringify(input);
  nameDropped(dropped, 'toolUse.input');
  return '';
}
