// Classifies Chat Completions stream frames for the passthrough tap and reads their usage.
// A chunk without content, refusal, reasoning, tool-call delta or finish_reason (the first
// chunk, with only the role) is `opening`; a chunk with `error` is `error`; finish_reason
// "content_filter" before any output (OpenAI's and Azure's filter stopped the answer) is `content_filter`.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import type { Usage } from '../../../core/plugin-api/canonical.ts';
import { setAnswerModel } from '../../../core/plugin-api/canonical.ts';
import { chunkUsage, usageFromChat, withServiceTier } from './usage.ts';

type StreamSeen = ReturnType<StreamInspector['inspect']>;

type Choice = { delta?: Record<string, unknown>; finish_reason?: unknown };

function nonEmpty(v: unknown): boolean {
  return typeof v === 'string' && v !== '';
}

function deltaCarries(d: Record<string, unknown>): boolean {
  return nonEmpty(d.content) || nonEmpty(d.refusal) || nonEmpty(d.reasoning_content) || nonEmpty(d.reasoning)
    || (Array.isArray(d.tool_calls) && d.tool_calls.length > 0);
}

function carriesOutput(choice: Choice | undefined): boolean {
  if (!choice) return true; // the usage chunk (choices: []) comes after the output
  if (choice.finish_reason) return true;
  return deltaCarries(choice.delta ?? {});
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * Once output has flowed, only an error or the usage matter: a frame that has neither an "error"
 * member nor a "usage" object (OpenAI adds "usage":null to every chunk) is passed without
 * JSON.parse, which is most frames of a stream. Looked for with indexOf: a regular expression
 * stops at every quote of every frame.
 */
function mayMatter(data: string): boolean {
  if (data.includes('"error"')) return true;
  for (let at = data.indexOf('"usage"'); at >= 0; at = data.indexOf('"usage"', at + 7)) {
    let i = at + 7;
    while (WHITESPACE.has(data[i])) i++;
    if (data[i] !== ':') continue;
    i++;
    while (WHITESPACE.has(data[i])) i++;
    if (data[i] === '{') return true;
  }
  return false;
}

export function chatStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  /** The tier and model the chunks say the answer runs on: every chunk carries them, and only some are parsed. */
  let tier: unknown;
  let model: unknown;
  let sawOutput = false;
  return {
    inspect(event, data) {
      const kind = classify(event, data);
      if (kind === 'output') sawOutput = true;
      return kind;
    },
    usage: () => usage,
  };

  function classify(_event: string | undefined, data: string): StreamSeen {
    if (sawOutput && !mayMatter(data)) return 'output';
    if (data.trim() === '[DONE]') return 'output';
    let chunk: { choices?: unknown; usage?: unknown; x_groq?: unknown; error?: unknown; service_tier?: unknown; model?: unknown } | null;
    try {
      chunk = JSON.parse(data);
    } catch {
      return 'output';
    }
    if (chunk === null || typeof chunk !== 'object') return 'output'; // `data: null` is no chunk
    if (chunk.error !== undefined && chunk.error !== null) return 'error';
    if (chunk.service_tier !== undefined) tier = chunk.service_tier;
    if (chunk.model) model = chunk.model; // Azure's first chunk (the prompt's filter results) names none
    const reported = chunkUsage(chunk);
    if (reported) usage = setAnswerModel(withServiceTier(usageFromChat(reported), tier), model);
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] as Choice | undefined : undefined;
    if (!sawOutput && choice?.finish_reason === 'content_filter' && !deltaCarries(choice.delta ?? {})) return 'content_filter';
    return carriesOutput(choice) ? 'output' : 'opening';
  }
}
