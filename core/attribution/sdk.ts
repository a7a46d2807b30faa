// The official SDKs, told by the user agent they send ("OpenAI/JS 4.104.0", "OpenAI/Python 1.99.0",
// "Anthropic/JS 0.60.0", "Anthropic/Python 0.64.0"): recorded as `openai-sdk` / `anthropic-sdk`,
// with that user agent in `extras` (cut at 256 characters).
import type { Attribution } from '../plugins/context.ts';

const SDKS: ReadonlyArray<readonly [prefix: string, client: string]> = [['OpenAI/', 'openai-sdk'], ['Anthropic/', 'anthropic-sdk']];
const MAX_LENGTH = 256;

export function sdkAttribution(headers: Record<string, string | string[] | undefined>): Attribution | undefined {
  const agent = headers['user-agent'];
  if (typeof agent !== 'string') return undefined;
  for (const [prefix, client] of SDKS) {
    if (agent.startsWith(prefix)) return { client, extras: { 'user-agent': agent.slice(0, MAX_LENGTH) } };
  }
  return undefined;
}
