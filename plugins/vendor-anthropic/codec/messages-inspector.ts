// Classifies Anthropic stream frames for the passthrough tap and reads their usage:
// message_start and ping are `opening`, `error` is `error`, a message_delta with stop_reason
// "refusal" before any content block is `content_filter`, everything else carries output.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import { StreamUsage } from './usage.ts';

// Named frames that carry output and no usage: classified by their name, without JSON.parse.
const OUTPUT_WITHOUT_USAGE: ReadonlySet<string> = new Set(['content_block_delta', 'content_block_start', 'content_block_stop', 'message_stop']);

export function messagesStreamInspector(): StreamInspector {
  const usage = new StreamUsage();
  let sawOutput = false;
  return {
    inspect(event, data) {
      if (event !== undefined && OUTPUT_WITHOUT_USAGE.has(event)) {
        sawOutput = true;
        return 'output';
      }
      if (event === 'ping') return 'opening';
      let type = event;
      let refused = false;
      try {
        const frame = JSON.parse(data) as { type?: unknown; message?: { usage?: unknown }; usage?: unknown; delta?: { stop_reason?: unknown } };
        if (typeof frame?.type === 'string') type = frame.type;
        if (type === 'message_start') usage.merge(frame.message?.usage);
        if (type === 'message_delta') {
          usage.merge(frame.usage);
          refused = frame.delta?.stop_reason === 'refusal';
        }
      } catch {
        // keep the SSE event name
      }
      if (type === 'message_start' || type === 'ping') return 'opening';
      if (type === 'error') return 'error';
      if (refused && !sawOutput) return 'content_filter';
      sawOutput = true;
      return 'output';
    },
    usage: () => usage.value(),
  };
}
