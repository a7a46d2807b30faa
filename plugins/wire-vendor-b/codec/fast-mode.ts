// Anthropic's premium-priced fast mode (`speed: "fast"`, Claude Code's /fast); without `speed` a
// request runs at the standard speed and price.
import type { InboundCodec } from '../../../core/plugin-api.ts';

export const fastSpeed: NonNullable<InboundCodec['fastMode']> = (request) =>
  request.member('speed') === 'fast' ? { member: 'speed', value: 'fast', standard: undefined } : null;
