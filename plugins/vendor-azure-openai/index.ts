import { definePlugin, Type } from '../../core/plugin-api.ts';
import { createAzureOpenAIAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-azure-openai',
  kind: 'vendor',
  description: 'Upstream adapter for Azure OpenAI deployments (Chat Completions, Responses, Embeddings), with the api-key header or Microsoft Entra ID.',
  options: Type.Object({
    id: Type.String({ default: 'azure-openai', description: 'The adapter id providers name in spec.adapter.' }),
    openaiAdapter: Type.String({ default: 'openai', description: "The id of vendor-openai's adapter, whose codec Azure's wire shares." }),
  }, { additionalProperties: false }),
  // Azure speaks OpenAI's wire: the codec is vendor-openai's adapter's.
  dependencies: ['vendor-openai'],
  register(relay, options) {
    const openai = relay.hooks.vendorAdapter(options.openaiAdapter);
    if (!openai) throw new Error(`vendor-azure-openai: no vendor adapter "${options.openaiAdapter}" (set vendor-openai's id, or this plugin's openaiAdapter option)`);
    relay.hooks.addVendorAdapter(createAzureOpenAIAdapter(options.id, openai));
  },
});
