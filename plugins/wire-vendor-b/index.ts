// Anthropic's Messages shape on the inference port, under a prefix (default /vendor-b).
import { definePlugin, Type, mountInferenceRoute, mountShapedNotFound, RelayError } from '../../core/plugin-api.ts';
import { checkedCountTokensCodec, messagesCodec } from './codec/index.ts';
import { messagesOwnership } from './codec/forwarded-owners.ts';

export default definePlugin({
  name: 'wire-vendor-b',
  kind: 'wire',
  description: 'Anthropic-shaped endpoints: /v1/messages, /v1/messages/count_tokens, /v1/models.',
  options: Type.Object({
    prefix: Type.String({ default: '/vendor-b', pattern: '^(/[A-Za-z0-9._~-]+)*$', description: 'Path prefix before /v1.' }),
  }, { additionalProperties: false }),
  register(relay, { prefix }) {
    // Passthrough records whose code execution container an answer made, and refuses another owner's.
    relay.hooks.addInboundCodec({ ...messagesCodec, ownership: messagesOwnership(relay.responsesState) });
    relay.hooks.addInboundCodec(checkedCountTokensCodec(relay.responsesState));
    mountShapedNotFound(relay, prefix, 'anthropic.messages');
    const tags = ['vendor-b (Anthropic)'];
    mountInferenceRoute(relay, { url: `${prefix}/v1/messages`, shape: 'anthropic.messages', summary: 'Anthropic Messages', tags });
    mountInferenceRoute(relay, {
      url: `${prefix}/v1/messages/count_tokens`, shape: 'anthropic.count_tokens', errorShape: 'anthropic.messages', streams: false,
      summary: 'Anthropic token counting (forwarded; for a model bound to OpenAI, counted by OpenAI\'s /v1/responses/input_tokens)', tags,
    });
    // Claude Code probes its base URL with HEAD at start-up.
    for (const url of [prefix || '/', `${prefix}/`]) {
      relay.inference.route({ method: 'HEAD', url, config: { shape: 'anthropic.messages' }, schema: { hide: true }, handler: async (_req, reply) => reply.code(200).send() });
    }
    const entry = (m: ReturnType<typeof relay.pipeline.reachableModels>[number]) => ({ type: 'model', id: m.metadata.slug, display_name: m.metadata.displayName, created_at: m.metadata.createdAt });
    relay.inference.get(`${prefix}/v1/models`, {
      config: { shape: 'anthropic.messages' },
      schema: { summary: 'Models reachable by the calling relay key, in Anthropic\'s list shape', tags, security: [{ relayKey: [] }] },
    }, async (request) => {
      const principal = await relay.pipeline.authenticate(request, 'anthropic.messages');
      const data = relay.pipeline.reachableModels(principal).map(entry);
      return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    });
    // The SDKs' models.retrieve: a model the key cannot reach is as unknown as one that does not exist.
    relay.inference.get<{ Params: { id: string } }>(`${prefix}/v1/models/:id`, {
      config: { shape: 'anthropic.messages' },
      schema: { summary: 'One model reachable by the calling relay key, in Anthropic\'s model shape', tags, security: [{ relayKey: [] }] },
    }, async (request) => {
      const principal = await relay.pipeline.authenticate(request, 'anthropic.messages');
      const model = relay.pipeline.reachableModels(principal).find((m) => m.metadata.slug === request.params.id);
      if (!model) throw new RelayError('RELAY_ERR_MODEL_NOT_FOUND', `The model \`${request.params.id}\` does not exist or this key cannot use it.`);
      return entry(model);
    });
  },
});
