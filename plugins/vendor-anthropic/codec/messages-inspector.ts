// Classifies Anthropic stream frames for the passthrough tap and reads their usage:
// message_start and ping are `opening`, `error` is `error`, everything else carries output.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import { StreamUsage } from './usage.ts';

// Named frames that carry output and no usage: classified by their name, without JSON.parse.
const OUTPUT_WITHOUT_USAGE: ReadonlySet<string> = new Set(['content_block_delta', 'content_block_start', 'content_block_stop', 'message_stop']);

export function messagesStreamInspector(): StreamInspector {
  const usage = new StreamUsage();
  return {
    inspect(event, data) {
      if (event !== undefined && OUTPUT_WITHOUT_USAGE.has(event)) return 'output';
      if (event === 'ping') return 'opening';
      let type = event;
      try {
        const frame = JSON.parse(data) as { type?: unknown; message?: { usage?: unknown }; usage?: unknown };
        if (typeof frame?.type === 'string') type = frame.type;
        if (type === 'message_start') usage.merge(frame.message?.usage);
        if (type === 'message_delta') usage.merge(frame.usage);
      } catch {
        // keep the SSE event name
      }
      if (type === 'message_start' || type === 'ping') return 'opening';
      if (type === 'error') return 'error';
      return 'output';
    },
    usage: () => usage.value(),
  };
}
