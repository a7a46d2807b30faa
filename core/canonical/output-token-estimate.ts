// An estimate of the output tokens of an answer whose usage the upstream never reported (the client
// cut it, the upstream broke it, or the upstream sends none): the characters of text, tool-call
// arguments, reasoning and refusals Relay saw of the answer, divided by CHARS_PER_TOKEN, the rule
// input-token-estimate.ts uses for the prompt. No tokenizer: an estimate, flagged as one where recorded.
import type { ContentPart, PartDelta } from './types.ts';
import { BYTES_PER_TOKEN } from './input-token-estimate.ts';

/** Characters of output per token: the input estimate's rule (characters, not bytes: the taps see strings). */
export const CHARS_PER_TOKEN = BYTES_PER_TOKEN;

/** Members of a vendor's answer or stream frame whose string value is what the model generated. */
const OUTPUT_MEMBERS: ReadonlySet<string> = new Set([
  'content', 'text', 'delta', 'arguments', 'partial_json', 'thinking', 'reasoning', 'reasoning_content', 'refusal', 'input',
]);
/** Members whose object value is a tool call's arguments as the model wrote them (Anthropic's tool_use, Gemini's functionCall). */
const ARGUMENT_OBJECTS: ReadonlySet<string> = new Set(['input', 'args']);
/** A frame's answer is never nested deeper than this; a deeper value is not walked. */
const MAX_DEPTH = 8;

/** The characters a canonical delta adds to the answer (a signature or a citation is not generated text). */
export function deltaChars(delta: PartDelta): number {
  return delta.type === 'text' || delta.type === 'arguments' || delta.type === 'reasoning' || delta.type === 'refusal' ? delta.text.length : 0;
}

/** The characters of a whole canonical answer's generated parts (text, tool-call arguments, reasoning, refusals). */
export function contentChars(content: readonly ContentPart[]): number {
  let chars = 0;
  for (const part of content) {
    if (part.type === 'text' || part.type === 'refusal') chars += part.text.length;
    else if (part.type === 'tool_call') chars += part.arguments.length;
    else if (part.type === 'reasoning') chars += part.text?.length ?? 0;
  }
  return chars;
}

/**
 * The characters of generated output in a vendor's JSON (a stream frame or a whole answer), in any
 * vendor's shape: the strings of the members that hold output (OUTPUT_MEMBERS), however nested; ids,
 * names, types and the envelope are not counted.
 */
export function generatedChars(value: unknown, depth = 0): number {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return 0;
  let chars = 0;
  if (Array.isArray(value)) {
    for (const item of value) chars += generatedChars(item, depth + 1);
    return chars;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (typeof inner === 'string') chars += OUTPUT_MEMBERS.has(key) ? inner.length : 0;
    else if (ARGUMENT_OBJECTS.has(key) && inner !== null && typeof inner === 'object' && !Array.isArray(inner)) chars += JSON.stringify(inner).length;
    else chars += generatedChars(inner, depth + 1);
  }
  return chars;
}

/** The estimated output tokens of `chars` characters of generated output (0 for none). */
export function estimateOutputTokens(chars: number): number {
  return chars > 0 ? Math.ceil(chars / CHARS_PER_TOKEN) : 0;
}
