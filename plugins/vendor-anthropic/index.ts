import { definePlugin, Type } from '../../core/plugin-api.ts';
import { DEFAULT_ANTHROPIC_VERSION, createAnthropicAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-anthropic',
  kind: 'vendor',
  description: 'Upstream adapter for Anthropic Messages (and count_tokens).',
  options: Type.Object({
    id: Type.String({ default: 'anthropic', description: 'The adapter id providers name in spec.adapter.' }),
    anthropicVersion: Type.String({ default: DEFAULT_ANTHROPIC_VERSION, description: 'anthropic-version sent when the client sent none.' }),
    cacheTranslated: Type.Boolean({
      default: true,
      description: 'Mark prompt-cache breakpoints (the last tool, the last system block, the last message) on requests translated from another shape, whose clients send none: later turns read the conversation from the cache at a tenth of the input price, and a prompt that is never sent again costs 1.25x on its first write. Passthrough is never changed.',
    }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createAnthropicAdapter(options.id, options.anthropicVersion, { cacheTranslated: options.cacheTranslated }));
  },
});
