// Custom (freeform) tools on upstreams that have none (Chat Completions here; the Responses
// API has them natively). The model sees a function with one required string parameter
// `input`, its description explaining the format and carrying the grammar; a call coming back
// is unwrapped from {"input": "..."} to the raw text and marked tool_kind 'custom'.
//
// The decoders need the request's custom tool names, but VendorAdapter.decodeResponse and
// streamDecoder receive only the route: encodeRequest remembers them per Route object (a
// WeakMap, so nothing outlives the route). The pipeline passes the same Route object to
// encodeRequest and to the decoder of that attempt. Should the names be missing, the
// inbound codecs still unwrap calls for tools the client declared custom.
import type { CanonicalRequest, Route, Tool } from '../../../core/plugin-api.ts';

type CustomTool = Extract<Tool, { type: 'custom' }>;

export const CUSTOM_INPUT_PARAMETER = 'input';

const customToolsByRoute = new WeakMap<object, ReadonlySet<string>>();

export function rememberCustomTools(route: Route, request: CanonicalRequest): void {
  const names = new Set((request.tools ?? []).filter((t) => t.type === 'custom').map((t) => t.name));
  if (names.size > 0) customToolsByRoute.set(route, names);
  else customToolsByRoute.delete(route);
}

export function customToolsOf(route: Route): ReadonlySet<string> {
  return customToolsByRoute.get(route) ?? new Set();
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

export const CUSTOM_INPUT_SCHEMA: Readonly<Record<string, unknown>> = {
  type: 'object',
  properties: { [CUSTOM_INPUT_PARAMETER]: { type: 'string', description: 'The raw input for the tool.' } },
  required: [CUSTOM_INPUT_PARAMETER],
  additionalProperties: false,
};

export function wrapCustomInput(raw: string): string {
  return JSON.stringify({ [CUSTOM_INPUT_PARAMETER]: raw });
}

/** {"input": "..."} -> the raw text; anything else is returned as it is. */
export function unwrapCustomInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    const value = (parsed as Record<string, unknown> | null)?.[CUSTOM_INPUT_PARAMETER];
    if (typeof value === 'string') return value;
  } catch {
    // not JSON: the model answered with raw text already
  }
  return args;
}
