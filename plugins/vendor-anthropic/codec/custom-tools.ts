// Custom (freeform) tools on Anthropic, which has none. The model sees a tool with one
// required string parameter `input`, its description explaining the format and carrying the
// grammar; a tool_use coming back is unwrapped from {"input": "..."} to the raw text and
// marked tool_kind 'custom'.
//
// The decoders need the request's custom tool names, but VendorAdapter.decodeResponse and
// streamDecoder receive only the route: encodeRequest remembers them per Route object (a
// WeakMap, so nothing outlives the route). The pipeline passes the same Route object to
// encodeRequest and to the decoder of that attempt. Should the names be missing, the
// inbound OpenAI codecs still unwrap calls for tools the client declared custom.
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

/** A tool_use input for a custom tool -> the raw text (JSON text when it has no string `input`). */
export function unwrapCustomInput(input: unknown): string {
  const value = (input as Record<string, unknown> | null)?.[CUSTOM_INPUT_PARAMETER];
  return typeof value === 'string' ? value : JSON.stringify(input ?? {});
}
