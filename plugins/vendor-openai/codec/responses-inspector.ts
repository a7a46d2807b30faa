// Classifies Responses stream frames for the passthrough tap and reads their usage:
// response.created / in_progress / queued are `opening`; response.failed and `error` are
// `error`; everything else carries output. Usage comes with the final response event.
import type { StreamInspector, Usage } from '../../../core/plugin-api.ts';
import { usageFromResponses } from './usage.ts';

const OPENING = new Set(['response.created', 'response.in_progress', 'response.queued']);
const ERROR = new Set(['response.failed', 'error']);
const FINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export function responsesStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  return {
    inspect(event, data) {
      let type = event;
      let frame: { type?: unknown; response?: { usage?: unknown } } | null = null;
      try {
        frame = JSON.parse(data);
        if (typeof frame?.type === 'string') type = frame.type;
      } catch {
        // keep the SSE event name
      }
      if (type !== undefined && FINAL.has(type) && frame?.response?.usage) usage = usageFromResponses(frame.response.usage);
      if (type !== undefined && OPENING.has(type)) return 'opening';
      if (type !== undefined && ERROR.has(type)) return 'error';
      return 'output';
    },
    usage: () => usage,
  };
}
