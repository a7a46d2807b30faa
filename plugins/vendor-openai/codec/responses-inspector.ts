// Classifies Responses stream frames for the passthrough tap and reads their usage:
// response.created / in_progress / queued are `opening`; response.failed and `error` are
// `error`; everything else carries output. Before any output, response.incomplete for reason
// content_filter, or response.failed whose error code names the content filter, is `content_filter`.
// Usage comes with the final response event.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import type { Usage } from '../../../core/plugin-api/canonical.ts';
import { usageOfResponse } from './usage.ts';

const OPENING = new Set(['response.created', 'response.in_progress', 'response.queued']);
const ERROR = new Set(['response.failed', 'error']);
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
// The bulk of a stream: output, no usage. Told by name, without JSON.parse (a Codex turn is mostly
// text, reasoning and tool-argument deltas).
const OUTPUT_EVENTS: ReadonlySet<string> = new Set([
  'response.output_item.added', 'response.output_item.done', 'response.content_part.added', 'response.content_part.done',
  'response.output_text.delta', 'response.output_text.done', 'response.refusal.delta', 'response.refusal.done',
  'response.function_call_arguments.delta', 'response.function_call_arguments.done',
  'response.custom_tool_call_input.delta', 'response.custom_tool_call_input.done',
  'response.reasoning_summary_part.added', 'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.delta', 'response.reasoning_summary_text.done',
  'response.reasoning_text.delta', 'response.reasoning_text.done',
]);

/** An answer stopped by OpenAI's (or Azure's) content filter, from its final response object. */
function filtered(response: ResponseObject | undefined): boolean {
  if (response?.incomplete_details?.reason === 'content_filter') return true;
  const code = response?.error?.code;
  return typeof code === 'string' && code.includes('content_filter');
}

interface ResponseObject {
  usage?: unknown;
  output?: unknown;
  incomplete_details?: { reason?: unknown } | null;
  error?: { code?: unknown } | null;
}

export function responsesStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  let sawOutput = false;
  return {
    inspect(event, data) {
      if (event !== undefined && OUTPUT_EVENTS.has(event)) {
        sawOutput = true;
        return 'output';
      }
      let type = event;
      let frame: { type?: unknown; response?: ResponseObject } | null = null;
      try {
        frame = JSON.parse(data);
        if (typeof frame?.type === 'string') type = frame.type;
      } catch {
        // keep the SSE event name
      }
      if (type !== undefined && FINAL.has(type) && frame?.response?.usage) usage = usageOfResponse(frame.response);
      if (type !== undefined && OPENING.has(type)) return 'opening';
      if (!sawOutput && (type === 'response.incomplete' || type === 'response.failed') && filtered(frame?.response)) return 'content_filter';
      if (type !== undefined && ERROR.has(type)) return 'error';
      sawOutput = true;
      return 'output';
    },
    usage: () => usage,
  };
}
