// The canonical, provider-neutral shape on the bare /v1 namespace: POST /v1/generate and
// GET /v1/models.
import { definePlugin, Type, mountInferenceRoute } from '../../core/plugin-api.ts';
import * as canonical from '../../core/plugin-api/canonical.ts';
import { canonicalCodec } from './codec.ts';
import { generateResponses } from './route-schema.ts';

export default definePlugin({
  name: 'wire-canonical',
  kind: 'wire',
  description: 'The canonical shape: POST /v1/generate (JSON and SSE) and GET /v1/models.',
  options: Type.Object({
    prefix: Type.String({ default: '', pattern: '^(/[A-Za-z0-9._~-]+)*$', description: 'Path prefix before /v1 (empty: the bare /v1 namespace).' }),
  }, { additionalProperties: false }),
  register(relay, { prefix }) {
    relay.hooks.addInboundCodec(canonicalCodec);
    const tags = ['canonical'];
    mountInferenceRoute(relay, {
      url: `${prefix}/v1/generate`, shape: 'canonical', summary: 'Generate in the canonical shape', tags,
      body: canonical.CanonicalRequest, responses: generateResponses,
    });
    relay.inference.get(`${prefix}/v1/models`, {
      config: { shape: 'canonical' },
      schema: { summary: 'Models reachable by the calling relay key', tags, security: [{ relayKey: [] }] },
    }, async (request) => {
      const principal = await relay.pipeline.authenticate(request, 'canonical');
      return {
        models: relay.pipeline.reachableModels(principal).map((m) => ({
          id: m.metadata.id,
          slug: m.metadata.slug,
          display_name: m.metadata.displayName,
          reasoning: m.spec.reasoning,
          ...(m.spec.contextWindow ? { context_window: m.spec.contextWindow } : {}),
        })),
      };
    });
  },
});
