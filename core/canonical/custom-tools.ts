// Custom (freeform) tools, such as Codex's apply_patch, on upstreams that have none (Chat
// Completions, Anthropic Messages): the model sees a function with one required string
// parameter `input`, its description explaining the format and carrying the grammar; a call
// that comes back is unwrapped from {"input": "..."} to the raw text and marked tool_kind
// 'custom'. Shared by every vendor adapter through the plugin API.
import type { CanonicalRequest, CustomTool } from './types.ts';

export const CUSTOM_INPUT_PARAMETER = 'input';

export const CUSTOM_INPUT_SCHEMA: Readonly<Record<string, unknown>> = {
  type: 'object',
  properties: { [CUSTOM_INPUT_PARAMETER]: { type: 'string', description: 'The raw input for the tool.' } },
  required: [CUSTOM_INPUT_PARAMETER],
  additionalProperties: false,
};

const NONE: ReadonlySet<string> = new Set();

/** Names of the request's custom tools (calls to them come back unwrapped). */
export function customToolNames(request: CanonicalRequest | undefined): ReadonlySet<string> {
  const names = (request?.tools ?? []).filter((t) => t.type === 'custom').map((t) => t.name);
  return names.length > 0 ? new Set(names) : NONE;
}

export function customToolDescription(tool: CustomTool): string {
  const lines = [
    tool.description ?? '',
    `This tool takes free-form text, not JSON: pass the whole input as the string parameter "${CUSTOM_INPUT_PARAMETER}".`,
  ];
  if (tool.format?.type === 'grammar') {
    lines.push(`The input must follow this ${tool.format.syntax} grammar:\n${tool.format.definition}`);
  }
  return lines.filter((l) => l !== '').join('\n\n');
}

/** Raw text -> the JSON arguments of the function the model sees. */
export function wrapCustomInput(raw: string): string {
  return JSON.stringify({ [CUSTOM_INPUT_PARAMETER]: raw });
}

/**
 * The function's arguments (JSON text or an already parsed object) -> the raw text. No input
 * (absent, null, '', an empty object or its JSON) is the empty text: a custom tool's input is free
 * text, and every path, the OpenAI ones reading `custom.input` as it is included, agrees on ''.
 */
export function unwrapCustomInput(args: unknown): string {
  let parsed: unknown = args;
  if (typeof args === 'string') {
    try {
      parsed = JSON.parse(args);
    } catch {
      return args; // not JSON ('' included): the model answered with raw text already
    }
  }
  if (isNoInput(parsed)) return '';
  const value = (parsed as Record<string, unknown>)[CUSTOM_INPUT_PARAMETER];
  if (typeof value === 'string') return value;
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/**
 * A call's canonical arguments text as the JSON object that vendors taking tool input as an object
 * (Messages, Converse, Gemini) expect: the parsed object; '' as {}; a custom tool's raw text, or
 * arguments that are not a JSON object, wrapped as {"input": text} so that nothing is lost.
 */
export function toolInputObject(args: string, kind: 'function' | 'custom' | undefined): Record<string, unknown> {
  if (kind === 'custom') return { [CUSTOM_INPUT_PARAMETER]: args };
  try {
    const parsed: unknown = JSON.parse(args === '' ? '{}' : args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // not JSON: wrapped below
  }
  return { [CUSTOM_INPUT_PARAMETER]: args };
}

function isNoInput(parsed: unknown): boolean {
  if (parsed === undefined || parsed === null) return true;
  return typeof parsed === 'object' && !Array.isArray(parsed) && Object.keys(parsed).length === 0;
}
