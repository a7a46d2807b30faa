// Classifies ConverseStream frames and reads their usage: messageStart is `opening`,
// `exception` is `error`, the rest carries output; metadata holds the usage.
import type { StreamInspector } from '../../../core/plugin-api.ts';
import type { Usage } from '../../../core/plugin-api/canonical.ts';
import { usageFromConverse } from './usage.ts';

export function converseStreamInspector(): StreamInspector {
  let usage: Usage | null = null;
  return {
    inspect(event, data) {
      if (event === 'messageStart') return 'opening';
      if (event === 'exception') return 'error';
      if (event === 'metadata') {
        try {
          usage = usageFromConverse((JSON.parse(data) as { usage?: unknown }).usage);
        } catch {
          // no usage in a frame that is not JSON
        }
      }
      return 'output';
    },
    usage: () => usage,
  };
}
