// functionCall.args -> canonical tool-call arguments: JSON text for function tools, the raw
// text for custom (freeform) tools, which Gemini sees as a function with one string
// parameter `input` (the plugin API's shared custom-tool helpers). args that are not an object
// are read as every adapter reads a tool call's input (toolArgumentsText): 42 is named, not "42".
import { toolArgumentsText, unwrapCustomInput } from '../../../core/plugin-api/canonical.ts';

/** The name of functionCall.args that are neither text, an object nor absent. */
export const FUNCTION_ARGS_NAME = 'functionCall.args';

export function argumentsOf(name: string, args: unknown, customTools: ReadonlySet<string>, dropped: string[]): { arguments: string; tool_kind: 'function' | 'custom' } {
  const text = toolArgumentsText(args, dropped, FUNCTION_ARGS_NAME);
  if (customTools.has(name)) return { arguments: unwrapCustomInput(text), tool_kind: 'custom' };
  return { arguments: text || '{}', tool_kind: 'function' };
}
