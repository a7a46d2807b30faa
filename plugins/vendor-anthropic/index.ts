import { definePlugin, Type } from '../../core/plugin-api.ts';
import { DEFAULT_ANTHROPIC_VERSION, createAnthropicAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-anthropic',
  kind: 'vendor',
  description: 'Upstream adapter for Anthropic Messages (and count_tokens).',
  options: Type.Object({
    id: Type.String({ default: 'anthropic', description: 'The adapter id providers name in spec.adapter.' }),
    anthropicVersion: Type.String({ default: DEFAULT_ANTHROPIC_VERSION, description: 'anthropic-version sent when the client sent none.' }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createAnthropicAdapter(options.id, options.anthropicVersion));
  },
});
