import { definePlugin, Type } from '../../core/plugin-api.ts';
import { VertexTokens } from './access-token.ts';
import { createGoogleAdapter } from './adapter.ts';
import { createVertexAnthropicAdapter } from './vertex-anthropic.ts';

export default definePlugin({
  name: 'vendor-google',
  kind: 'vendor',
  description: 'Upstream adapters for Google: Gemini models on the Gemini API or Vertex AI, and Claude on Vertex AI (passed through to Messages clients).',
  options: Type.Object({
    id: Type.String({ default: 'google', description: 'The adapter id of Gemini models (Gemini API or Vertex AI), named in spec.adapter.' }),
    vertexAnthropicId: Type.String({ default: 'vertex-anthropic', description: 'The adapter id of Claude on Vertex AI, named in spec.adapter.' }),
    schemaDialect: Type.Union([Type.Literal('json-schema'), Type.Literal('openapi')], {
      default: 'json-schema',
      description: 'json-schema: parametersJsonSchema/responseJsonSchema; openapi: parameters/responseSchema (the OpenAPI subset; unknown keywords removed).',
    }),
    workloadIdentity: Type.Boolean({
      default: false,
      description: "Let Vertex hosts use the machine's own Google credentials (spec.options.auth: workload-identity). Off by default: whoever edits the catalog chooses a host's base URL, and would otherwise be sent this machine's tokens.",
    }),
  }, { additionalProperties: false }),
  register(relay, options) {
    // One token cache for both adapters: a service account serving Gemini and Claude fetches one token.
    const tokens = new VertexTokens(options.workloadIdentity);
    relay.hooks.addVendorAdapter(createGoogleAdapter({ id: options.id, schemaDialect: options.schemaDialect, tokens, workloadIdentity: options.workloadIdentity }));
    relay.hooks.addVendorAdapter(createVertexAnthropicAdapter(options.vertexAnthropicId, tokens, options.workloadIdentity));
  },
});
