// GET {prefix}/v1/models: the model-catalog document for the calling relay key. Codex itself
// fetches it only with command auth and no `model_catalog_json`; the example saves it to a file
// for `model_catalog_json` (examples/codex/README.md). `?client_version=` is accepted and ignored.
import { RelayError, type RelayContext } from '../../core/plugin-api.ts';
import { modelsDocument } from './models-document.ts';

export function mountModelsRoute(relay: RelayContext, url: string, tags: string[]): void {
  relay.inference.get(url, {
    config: { shape: 'openai.responses' },
    schema: {
      summary: "Codex's model-catalog document for the calling relay key",
      tags,
      security: [{ relayKey: [] }],
    },
  }, async (request, reply) => {
    const principal = await relay.pipeline.authenticate(request, 'openai.responses');
    // Read once: the document is one consistent snapshot of policy and catalog.
    const snapshot = relay.snapshot();
    const models = relay.pipeline.reachableModels(principal);
    if (models.length === 0) {
      throw new RelayError('RELAY_ERR_MODEL_NOT_GRANTED', "This relay key's policy grants no model that is reachable now.");
    }
    void reply.header('cache-control', 'no-store');
    return modelsDocument(models, snapshot);
  });
}
