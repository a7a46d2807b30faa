// OpenAI's premium-priced fast mode is priority processing (`service_tier: "priority"`, Codex's
// Fast); `default` is the standard speed and price, which an explicit value keeps even where the
// project's own default is priority.
import type { InboundCodec } from '../../../core/plugin-api.ts';

export const priorityTier: NonNullable<InboundCodec['fastMode']> = (request) =>
  request.member('service_tier') === 'priority' ? { member: 'service_tier', value: 'priority', standard: 'default' } : null;
