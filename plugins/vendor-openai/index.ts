import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createOpenAIAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-openai',
  kind: 'vendor',
  description: 'Upstream adapter for OpenAI and OpenAI-compatible servers (Chat Completions, Responses, Embeddings).',
  options: Type.Object({
    id: Type.String({ default: 'openai', description: 'The adapter id providers name in spec.adapter.' }),
    injectStreamUsage: Type.Boolean({
      default: false,
      description: 'Passthrough of streamed Chat Completions whose client did not set stream_options.include_usage: ask the upstream for usage anyway and hide the usage-only chunk, so the usage record has token counts. The other chunks then carry "usage":null, so the stream is no longer byte for byte what the client alone would have got.',
    }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createOpenAIAdapter(options.id, { injectStreamUsage: options.injectStreamUsage }));
  },
});
