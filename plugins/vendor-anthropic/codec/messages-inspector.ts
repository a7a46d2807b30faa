// Classifies Anthropic stream frames for the passthrough tap and reads their usage:
// message_start and ping are `opening`, `error` is `error`, everything else carries output.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import { StreamUsage } from './usage.ts';

export function messagesStreamInspector(): StreamInspector {
  const usage = new StreamUsage();
  return {
    inspect(event, data) {
      // The bulk of a stream: named, carries output, no usage; no need to parse it.
      if (event === 'content_block_delta') return 'output';
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
