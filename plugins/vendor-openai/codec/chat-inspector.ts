// Classifies Chat Completions stream frames for the passthrough tap and reads their usage.
// A chunk without content, refusal, reasoning, tool-call delta or finish_reason (the first
// chunk, with only the role) is `opening`; a chunk with `error` is `error`.
import type { StreamInspector, Usage } from '../../../core/plugin-api.ts';
import { usageFromChat } from './usage.ts';

function carriesOutput(choice: { delta?: Record<string, unknown>; finish_reason?: unknown } | undefined): boolean {
  if (!choice) return true; // the usage chunk (choices: []) comes after the output
  if (choice.finish_reason) return true;
  const d = choice.delta ?? {};
  const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v !== '';
  return nonEmpty(d.content) || nonEmpty(d.refusal) || nonEmpty(d.reasoning_content) || nonEmpty(d.reasoning)
    || (Array.isArray(d.tool_calls) && d.tool_calls.length > 0);
}

export function chatStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  return {
    inspect(_event, data) {
      if (data.trim() === '[DONE]') return 'output';
      let chunk: { choices?: unknown; usage?: unknown; error?: unknown };
      try {
        chunk = JSON.parse(data);
      } catch {
        return 'output';
      }
      if (chunk.error !== undefined && chunk.error !== null) return 'error';
      if (chunk.usage) usage = usageFromChat(chunk.usage);
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      return carriesOutput(choice) ? 'output' : 'opening';
    },
    usage: () => usage,
  };
}
