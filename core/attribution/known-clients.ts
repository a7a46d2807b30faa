// Attribution of known clients, run by the pipeline for every request whatever the auth plugin
// (a client is not always on its own route: Claude Code with a relay key as its API key calls
// /vendor-b like any SDK). Claude Code first (it is built on the Anthropic SDK and sends its user
// agent's headers too), then Codex, then the official SDKs by user agent; undefined otherwise.
// Only the headers these modules name are read, so no credential reaches a usage event.
import type { Attribution } from '../plugins/context.ts';
import { claudeCodeAttribution, isClaudeCode } from './claude-code.ts';
import { codexAttribution, isCodex } from './codex.ts';
import { sdkAttribution } from './sdk.ts';

export function knownClientAttribution(headers: Record<string, string | string[] | undefined>): Attribution | undefined {
  if (isClaudeCode(headers)) return claudeCodeAttribution(headers);
  if (isCodex(headers)) return codexAttribution(headers);
  return sdkAttribution(headers);
}
