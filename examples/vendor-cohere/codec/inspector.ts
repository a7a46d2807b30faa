// Classifies Cohere stream events for failover before the first byte and reads their usage:
// message-start opens; message-end carries usage (an `error` in it is an error); everything
// else is output.
import type { StreamInspector } from 'relay-gateway';
import type { Usage } from 'relay-gateway/canonical';
import { usageFromCohere } from './usage.ts';
import type { CohereStreamEvent } from './wire.ts';

export function cohereStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  return {
    inspect(_event, data) {
      let e: CohereStreamEvent;
      try {
        e = JSON.parse(data) as CohereStreamEvent;
      } catch {
        return 'output';
      }
      if (e.type === 'message-start') return 'opening';
      if (e.type === 'message-end') {
        if (e.delta?.error) return 'error';
        usage = usageFromCohere(e.delta?.usage) ?? usage;
      }
      return 'output';
    },
    usage: () => usage,
  };
}
