// A policy's limit on premium-priced fast modes (PolicySpec.fastModes): OpenAI's priority
// processing (Codex's Fast) costs 2-2.5x, Anthropic's fast mode (Claude Code's /fast) 2-6x. The
// inbound codec says what the request asks for (InboundCodec.fastMode); the policy passes it,
// sends it at the standard speed, or refuses it. Translation never carries these members, so only
// a passed-through body is changed.
import type { PolicySpec } from '../catalog/kinds.ts';
import { RelayError } from '../errors.ts';
import type { InboundCodec } from '../hooks.ts';
import type { InferenceCall } from '../plugins/context.ts';

/** Members a passed-through body gets instead of what it asked for (undefined: left out). */
export type StandardSpeed = Readonly<Record<string, string | undefined>>;

/**
 * What the request's fast-mode ask turns into under the policy: null to send the body as it is,
 * the members to change for the standard speed, or a 403 (thrown) naming what was asked.
 */
export function standardSpeedFor(
  limit: PolicySpec['fastModes'], codec: InboundCodec | undefined, call: Pick<InferenceCall, 'member'>, extras: Record<string, string>,
): StandardSpeed | null {
  if (limit === undefined || limit === 'allow') return null;
  const ask = codec?.fastMode?.(call) ?? null;
  if (ask === null) return null;
  const asked = `${ask.member} "${ask.value}"`;
  if (limit === 'refuse') {
    throw new RelayError('RELAY_ERR_FAST_MODE_NOT_ALLOWED',
      `This relay key's policy does not allow fast mode (${asked}), which is priced above the standard rates. Send the request without it.`,
      { field: `/${ask.member}` });
  }
  extras.fast_mode = `standard, asked ${ask.member}=${ask.value}`;
  return { [ask.member]: ask.standard };
}
