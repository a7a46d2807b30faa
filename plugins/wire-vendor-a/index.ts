// OpenAI's wire shapes on the inference port: Chat Completions, Responses, Embeddings, and the
// models list, under a prefix (default /vendor-a).
import { definePlugin, Type, mountInferenceRoute, mountShapedNotFound, RelayError } from '../../core/plugin-api.ts';
import { chatCodec, checkedInputTokensCodec, statefulResponsesCodec } from './codec/index.ts';
import { mountStoredResponseRoutes } from './stored-responses-routes.ts';

export default definePlugin({
  name: 'wire-vendor-a',
  kind: 'wire',
  description: 'OpenAI-shaped endpoints: /v1/chat/completions, /v1/responses, /v1/embeddings, /v1/models.',
  options: Type.Object({
    prefix: Type.String({ default: '/vendor-a', pattern: '^(/[A-Za-z0-9._~-]+)*$', description: 'Path prefix before /v1.' }),
  }, { additionalProperties: false }),
  register(relay, { prefix }) {
    relay.hooks.addInboundCodec(chatCodec);
    relay.hooks.addInboundCodec(statefulResponsesCodec(relay.responsesState));
    relay.hooks.addInboundCodec(checkedInputTokensCodec(relay.responsesState));
    mountShapedNotFound(relay, prefix, 'openai.chat');
    const tags = ['vendor-a (OpenAI)'];
    mountInferenceRoute(relay, { url: `${prefix}/v1/chat/completions`, shape: 'openai.chat', summary: 'OpenAI Chat Completions', tags });
    mountInferenceRoute(relay, { url: `${prefix}/v1/responses`, shape: 'openai.responses', summary: 'OpenAI Responses', tags });
    mountInferenceRoute(relay, {
      url: `${prefix}/v1/responses/input_tokens`, shape: 'openai.input_tokens', streams: false,
      summary: 'OpenAI input token counting (forwarded; for a model bound to Anthropic, counted by Anthropic\'s count_tokens)', tags,
    });
    mountStoredResponseRoutes(relay, prefix, tags);
    mountInferenceRoute(relay, {
      url: `${prefix}/v1/embeddings`, shape: 'openai.embeddings', errorShape: 'openai.chat', streams: false,
      summary: 'OpenAI Embeddings (passed through byte for byte)', tags,
    });
    const entry = (m: ReturnType<typeof relay.pipeline.reachableModels>[number]) => ({ id: m.metadata.slug, object: 'model', created: Math.floor(Date.parse(m.metadata.createdAt) / 1000), owned_by: 'relay' });
    relay.inference.get(`${prefix}/v1/models`, {
      config: { shape: 'openai.chat' },
      schema: { summary: 'Models reachable by the calling relay key, in OpenAI\'s list shape', tags, security: [{ relayKey: [] }] },
    }, async (request) => {
      const principal = await relay.pipeline.authenticate(request, 'openai.chat');
      return { object: 'list', data: relay.pipeline.reachableModels(principal).map(entry) };
    });
    // The SDKs' models.retrieve: a model the key cannot reach is as unknown as one that does not exist.
    relay.inference.get<{ Params: { id: string } }>(`${prefix}/v1/models/:id`, {
      config: { shape: 'openai.chat' },
      schema: { summary: 'One model reachable by the calling relay key, in OpenAI\'s model shape', tags, security: [{ relayKey: [] }] },
    }, async (request) => {
      const principal = await relay.pipeline.authenticate(request, 'openai.chat');
      const model = relay.pipeline.reachableModels(principal).find((m) => m.metadata.slug === request.params.id);
      if (!model) throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${request.params.id}\` does not exist or this key cannot use it.`);
      return entry(model);
    });
  },
});
