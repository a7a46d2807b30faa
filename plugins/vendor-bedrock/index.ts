import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createBedrockAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-bedrock',
  kind: 'vendor',
  description: 'Upstream adapter for AWS Bedrock: Converse for any model, Anthropic Messages through InvokeModel.',
  options: Type.Object({
    id: Type.String({ default: 'bedrock', description: 'The adapter id providers name in spec.adapter.' }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createBedrockAdapter(options.id));
  },
});
