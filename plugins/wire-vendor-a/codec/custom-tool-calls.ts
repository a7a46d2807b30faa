// Safety net for custom (freeform) tools on the way back to an OpenAI-shaped client.
// Upstreams without custom tools see a custom tool as a function with one string
// parameter `input`; the vendor adapter unwraps the call and marks it tool_kind 'custom'.
// Should a call for a tool the client declared custom still arrive as a function call
// (e.g. an adapter without that rule), it is unwrapped here, so the client always gets
// its custom tool call back with the raw input text.
import { unwrapCustomInput, type CanonicalRequest } from '../../../core/plugin-api/canonical.ts';

export { unwrapCustomInput };

export function customToolNames(request: CanonicalRequest): ReadonlySet<string> {
  return new Set((request.tools ?? []).filter((t) => t.type === 'custom').map((t) => t.name));
}

/** A call's client-facing kind and input, given the request's custom tools. */
export function clientToolCall(
  part: { name: string; arguments: string; tool_kind?: 'function' | 'custom' },
  customTools: ReadonlySet<string>,
): { kind: 'function' | 'custom'; input: string } {
  if (part.tool_kind === 'custom') return { kind: 'custom', input: part.arguments };
  if (customTools.has(part.name)) return { kind: 'custom', input: unwrapCustomInput(part.arguments) };
  return { kind: 'function', input: part.arguments };
}
