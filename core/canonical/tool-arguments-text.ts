// A tool call's input as canonical arguments text, whole or streamed, for every answer decoder:
// upstreams send text where their wire says object (or the reverse), and a few send neither.

/**
 * `input` as tool-call arguments text: a string as it is (never encoded again), an object or array
 * as its JSON, null or absent as ''. Any other value (a number, a boolean) is no arguments text:
 * it is named `name` in `dropped` (once) and read as ''.
 */
export function toolArgumentsText(input: unknown, dropped: string[], name: string): string {
  if (typeof input === 'string') return input;
  if (input === undefined || input === null) return '';
  if (typeof input === 'object') return JSON.stringify(input);
  if (!dropped.includes(name)) dropped.push(name);
  return '';
}
