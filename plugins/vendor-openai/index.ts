import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createOpenAIAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-openai',
  kind: 'vendor',
  description: 'Upstream adapter for OpenAI and OpenAI-compatible servers (Chat Completions, Responses, Embeddings).',
  options: Type.Object({
    id: Type.String({ default: 'openai', description: 'The adapter id providers name in spec.adapter.' }),
    injectStreamUsage: Type.Boolean({
      default: true,
      description: 'Passthrough of streamed Chat Completions whose client did not set stream_options.include_usage: ask the upstream for usage anyway, hide the usage-only chunk and the "usage":null the other chunks then carry, so the usage record has token counts and the client gets what it asked for. false forwards the request as sent (such streams are then logged with 0 tokens).',
    }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createOpenAIAdapter(options.id, { injectStreamUsage: options.injectStreamUsage }));
  },
});
