// Cohere tool-call arguments (JSON text) -> canonical: as they are for function tools, the raw
// text for custom (freeform) tools, which Cohere sees as a function with one string parameter.
import { unwrapCustomInput } from 'relay-gateway/canonical';

export function argumentsOf(name: string, args: string | undefined, customTools: ReadonlySet<string>): { arguments: string; tool_kind: 'function' | 'custom' } {
  const text = args ?? '';
  if (!customTools.has(name)) return { arguments: text, tool_kind: 'function' };
  try {
    return { arguments: unwrapCustomInput(JSON.parse(text === '' ? '{}' : text)), tool_kind: 'custom' };
  } catch {
    return { arguments: text, tool_kind: 'custom' };
  }
}
