import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createOpenAIAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-openai',
  kind: 'vendor',
  description: 'Upstream adapter for OpenAI and OpenAI-compatible servers (Chat Completions, Responses, Embeddings).',
  options: Type.Object({
    id: Type.String({ default: 'openai', description: 'The adapter id providers name in spec.adapter.' }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createOpenAIAdapter(options.id));
  },
});
