// functionCall.args -> canonical tool-call arguments: JSON text for function tools, the raw
// text for custom (freeform) tools, which Gemini sees as a function with one string
// parameter `input` (the plugin API's shared custom-tool helpers).
import { unwrapCustomInput } from 'relay-gateway/canonical';

export function argumentsOf(name: string, args: unknown, customTools: ReadonlySet<string>): { arguments: string; tool_kind: 'function' | 'custom' } {
  if (customTools.has(name)) return { arguments: unwrapCustomInput(args ?? {}), tool_kind: 'custom' };
  return { arguments: JSON.stringify(args ?? {}), tool_kind: 'function' };
}
