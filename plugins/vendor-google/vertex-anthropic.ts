// Claude on Vertex AI: Anthropic Messages passed through to Messages clients (Claude Code, the
// Anthropic SDK). Vertex wants the model in the URL (rawPredict, streamRawPredict) rather than
// the body, and `anthropic_version: "vertex-2023-10-16"` in the body; count_tokens is the
// `count-tokens` model's rawPredict. Other client shapes are not routed here (no translation:
// this plugin has no Messages codec of its own; bind the model to vendor-anthropic for them).
import { RelayError, type ShapeId, type UpstreamRequest, type VendorAdapter } from '../../core/plugin-api.ts';
import type { VertexTokens } from './access-token.ts';
import { vertexUrl } from './endpoints.ts';
import { isVertex, vertexOptions } from './host-options.ts';
import { messagesStreamInspector, usageOfMessagesAnswer, type MessagesAnswer } from '../../core/plugin-api/canonical.ts';
import { decodeMessagesError } from './messages-errors.ts';
import { refusedResponse, sendToVertex } from './vertex-send.ts';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';
const SHAPES: readonly ShapeId[] = ['anthropic.messages', 'anthropic.count_tokens'];

/** The client's Messages body as Vertex takes it (the model moves to the URL, except for count_tokens). */
export function vertexMessagesBody(body: Buffer | string, keepModel: boolean): string {
  const json = JSON.parse(Buffer.isBuffer(body) ? body.toString('utf8') : body) as Record<string, unknown>;
  const { model, ...rest } = json;
  return JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest, ...(keepModel ? { model } : {}) });
}

function notTranslated(): never {
  throw new RelayError('RELAY_ERR_INTERNAL', 'Claude on Vertex is passed through only; it has no translation');
}

export function createVertexAnthropicAdapter(id: string, tokens: VertexTokens, workloadIdentity: boolean): VendorAdapter {
  return {
    id,
    shapes: SHAPES,
    hostOptions: vertexOptions(workloadIdentity),
    translationShape: () => null,
    async send(req: UpstreamRequest) {
      if (!SHAPES.includes(req.shape)) throw new Error(`the ${id} adapter does not speak ${req.shape}`);
      const host = req.route.host.spec;
      if (!isVertex(host.options)) return refusedResponse(`host ${req.route.host.metadata.slug} has no Vertex options (spec.options.mode "vertex", project, location)`);
      const counting = req.shape === 'anthropic.count_tokens';
      const url = vertexUrl(host.baseUrl, host.options, 'anthropic', counting ? 'count-tokens' : req.route.upstreamModel, !counting && req.stream);
      return sendToVertex(req, url, vertexMessagesBody(req.body, counting), tokens, host.options);
    },
    encodeRequest: notTranslated,
    decodeResponse: notTranslated,
    streamDecoder: notTranslated,
    decodeError: (_shape, status, body) => decodeMessagesError(status, body),
    usageFromBody: (shape, body) => (shape === 'anthropic.messages' ? usageOfMessagesAnswer(body as MessagesAnswer | null) : null),
    streamInspector: () => messagesStreamInspector(),
  };
}
