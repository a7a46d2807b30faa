// Codex CLI (agent-a): the Responses endpoint Codex calls, routed to whatever upstream each model
// is bound to (passthrough to a Responses upstream, translation to Messages or Chat Completions
// otherwise), the model-catalog document for its picker, and attribution of every request.
import { definePlugin, Type, mountInferenceRoute, mountShapedNotFound } from '../../core/plugin-api.ts';
import { codexAttribution } from '../../core/plugin-api/clients.ts';
import { mountModelsRoute } from './models-route.ts';

export default definePlugin({
  name: 'agent-codex',
  kind: 'agent',
  description: 'Codex CLI integration: /agent-a/v1/responses and its model-catalog document at /agent-a/v1/models.',
  // The Responses inbound codec (translation to non-Responses upstreams) comes from wire-vendor-a.
  dependencies: ['wire-vendor-a'],
  options: Type.Object({
    prefix: Type.String({ default: '/agent-a', pattern: '^(/[A-Za-z0-9._~-]+)*$', description: 'Path prefix before /v1; Codex\'s base_url is <relay>/<prefix>/v1.' }),
    webSearch: Type.Union([Type.Literal('drop'), Type.Literal('upstream')], {
      default: 'drop',
      description: 'Codex\'s web_search tool on a model bound to a non-OpenAI-Responses upstream: drop (left out and named in x-relay-dropped, as SPEC says) or upstream (the upstream\'s own search, e.g. Anthropic\'s web_search_20250305, which runs live and is billed per search).',
    }),
  }, { additionalProperties: false }),
  register(relay, { prefix, webSearch }) {
    mountShapedNotFound(relay, prefix, 'openai.responses');
    const tags = ['agent-a (Codex CLI)'];
    mountInferenceRoute(relay, {
      url: `${prefix}/v1/responses`,
      shape: 'openai.responses',
      summary: 'OpenAI Responses for Codex CLI (attributed to the client)',
      tags,
      attribute: (request) => codexAttribution(request.headers),
      // Codex declares web search on every request: a live, billed search elsewhere is opt-in.
      upstreamWebSearch: webSearch === 'upstream',
    });
    mountModelsRoute(relay, `${prefix}/v1/models`, tags);
  },
});
