// An in-house vendor plugin that lives outside plugins/ and compiles against Relay's public
// plugin API only: Google's Gemini generateContent (JSON and SSE streams). Providers with
// `spec.adapter: gemini` route to it; clients in any shape reach it through the canonical shape.
import { definePlugin, Type } from 'relay-gateway';
import { createGeminiAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-gemini',
  kind: 'vendor',
  description: "Upstream adapter for Google's Gemini generateContent API.",
  options: Type.Object({
    id: Type.String({ default: 'gemini', description: 'The adapter id providers name in spec.adapter.' }),
    schemaDialect: Type.Union([Type.Literal('json-schema'), Type.Literal('openapi')], {
      default: 'json-schema',
      description: 'json-schema: parametersJsonSchema/responseJsonSchema; openapi: parameters/responseSchema (the OpenAPI subset; unknown keywords removed).',
    }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createGeminiAdapter({ id: options.id, schemaDialect: options.schemaDialect }));
  },
});
