// The Google adapter for Gemini models: the Gemini API (the host key, an API key, in
// x-goog-api-key) or Vertex AI (an OAuth token from a service-account key or workload
// identity), chosen by the host's spec.options.mode. Both speak generateContent and
// streamGenerateContent?alt=sse; every client shape reaches them through the canonical shape.
import { Readable } from 'node:stream';
import { readUpstreamError, sendUpstream, type UpstreamRequest, type UpstreamResponse, type VendorAdapter } from '../../core/plugin-api.ts';
import { refuseUnlistedStorage } from '../../core/plugin-api/canonical.ts';
import type { VertexTokens } from './access-token.ts';
import { GEMINI_SHAPE, geminiTranslation, isInvalidApiKey, parseGeminiError, type SchemaDialect } from './codec/index.ts';
import { geminiApiUrl, vertexUrl } from './endpoints.ts';
import { googleHostOptions, isVertex, readsHostStorage } from './host-options.ts';
import { sendToVertex } from './vertex-send.ts';

/**
 * The Gemini API answers a wrong API key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID):
 * reported as 401, so that the pipeline marks the host key invalid and fails over, as it does
 * for vendors that say 401. Other 400 bodies are handed on unchanged.
 */
async function withKeyRefusalAs401(res: UpstreamResponse): Promise<UpstreamResponse> {
  if (res.status !== 400) return res;
  // Read decoded (a proxy may compress it), passed on as it came: the kernel decodes it for the caller.
  const { bytes, decoded } = await readUpstreamError(res);
  const status = decoded !== null && isInvalidApiKey(parseGeminiError(decoded.toString('utf8'))) ? 401 : 400;
  return { status, headers: res.headers, body: Readable.from([bytes]) };
}

export interface GoogleAdapterOptions {
  id: string;
  schemaDialect: SchemaDialect;
  tokens: VertexTokens;
  /** Whether hosts may use the machine's own Google credentials (the config's choice, not the catalog's). */
  workloadIdentity: boolean;
}

export function createGoogleAdapter(options: GoogleAdapterOptions): VendorAdapter {
  const translation = geminiTranslation(options.schemaDialect);
  return {
    id: options.id,
    shapes: [GEMINI_SHAPE],
    hostOptions: googleHostOptions(options.workloadIdentity),
    translationShape: (routeShapes) => (routeShapes.includes(GEMINI_SHAPE) ? GEMINI_SHAPE : null),
    async send(req: UpstreamRequest) {
      if (req.shape !== GEMINI_SHAPE) throw new Error(`the google adapter does not speak ${req.shape}`);
      const host = req.route.host.spec;
      const hostOptions = host.options;
      if (isVertex(hostOptions)) {
        return sendToVertex(req, vertexUrl(host.baseUrl, hostOptions, 'google', req.route.upstreamModel, req.stream), req.body, options.tokens, hostOptions);
      }
      const headers: Record<string, string> = { ...req.headers, ...(host.headers ?? {}), 'content-type': 'application/json' };
      if (req.credential !== null) headers['x-goog-api-key'] = req.credential;
      const res = await sendUpstream(req, geminiApiUrl(host.baseUrl, req.route.upstreamModel, req.stream), {
        headers, body: req.body, timeoutMs: host.timeoutMs,
      });
      return withKeyRefusalAs401(res);
    },
    ...translation,
    encodeRequest(shape, request, route, dropped) {
      refuseUnlistedStorage(request, {
        isStorage: readsHostStorage,
        allowed: (route.host.spec.options as { storageLocations?: string[] } | undefined)?.storageLocations,
        model: route.model?.metadata.slug ?? route.upstreamModel,
      });
      return translation.encodeRequest(shape, request, route, dropped);
    },
  };
}
