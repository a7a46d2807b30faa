// An in-house vendor plugin that lives outside plugins/ and compiles against Relay's public
// plugin API only: Cohere's v2 Chat API (JSON and SSE streams), a vendor Relay does not ship.
// Providers with `spec.adapter: cohere` route to it; clients in any shape reach it through the
// canonical shape.
import { definePlugin, Type } from 'relay-gateway';
import { createCohereAdapter } from './adapter.ts';

export default definePlugin({
  name: 'vendor-cohere',
  kind: 'vendor',
  description: "Upstream adapter for Cohere's v2 Chat API.",
  options: Type.Object({
    id: Type.String({ default: 'cohere', description: 'The adapter id providers name in spec.adapter.' }),
  }, { additionalProperties: false }),
  register(relay, options) {
    relay.hooks.addVendorAdapter(createCohereAdapter(options.id));
  },
});
