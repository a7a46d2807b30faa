import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createBedrockAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-bedrock',
  kind: 'vendor',
  description: 'Upstream adapter for AWS Bedrock: Converse for any model, Anthropic Messages through InvokeModel.',
  options: Type.Object({
    id: Type.String({ default: 'bedrock', description: 'The adapter id providers name in spec.adapter.' }),
    cacheTranslated: Type.Boolean({
      default: true,
      description: 'Put prompt-cache points (after the tools, the system prompt and the last message) in Converse requests to Claude models that take them: later turns read the conversation from the cache at a tenth of the input price, and a prompt that is never sent again costs 1.25x on its first write. InvokeModel passthrough is never changed.',
    }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createBedrockAdapter(options.id, { cacheTranslated: options.cacheTranslated }));
  },
});
