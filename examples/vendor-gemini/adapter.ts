// The Gemini adapter: POST {baseUrl}/models/{model}:generateContent for JSON answers and
// :streamGenerateContent?alt=sse for streams, the host key in `x-goog-api-key`.
import { Readable } from 'node:stream';
import { joinUrl, sendUpstream, type UpstreamRequest, type UpstreamResponse, type VendorAdapter } from 'relay-gateway';
import { GEMINI_SHAPE, geminiTranslation, isInvalidApiKey, parseGeminiError, type SchemaDialect } from './codec/index.ts';

/** `models/gemini-2.5-flash` and `gemini-2.5-flash` name the same model. */
export function modelPath(upstreamModel: string): string {
  const name = upstreamModel.replace(/^models\//, '');
  return `/models/${encodeURIComponent(name)}`;
}

export function endpointFor(baseUrl: string, upstreamModel: string, stream: boolean): string {
  return joinUrl(baseUrl, modelPath(upstreamModel)) + (stream ? ':streamGenerateContent?alt=sse' : ':generateContent');
}

async function readAll(body: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * Gemini answers a wrong API key with 400 INVALID_ARGUMENT (reason API_KEY_INVALID). It is
 * reported as 401, so that the pipeline marks the host key invalid and fails over, as it does
 * for vendors that say 401. Other 400 bodies are handed on unchanged.
 */
async function withKeyRefusalAs401(res: UpstreamResponse): Promise<UpstreamResponse> {
  if (res.status !== 400) return res;
  const bytes = await readAll(res.body);
  const status = isInvalidApiKey(parseGeminiError(bytes.toString('utf8'))) ? 401 : 400;
  return { status, headers: res.headers, body: Readable.from([bytes]) };
}

export interface GeminiAdapterOptions {
  id: string;
  schemaDialect: SchemaDialect;
}

export function createGeminiAdapter(options: GeminiAdapterOptions): VendorAdapter {
  return {
    id: options.id,
    shapes: [GEMINI_SHAPE],
    translationShape: (routeShapes) => (routeShapes.includes(GEMINI_SHAPE) ? GEMINI_SHAPE : null),
    async send(req: UpstreamRequest) {
      if (req.shape !== GEMINI_SHAPE) throw new Error(`the gemini adapter does not speak ${req.shape}`);
      const host = req.route.host.spec;
      const headers: Record<string, string> = { ...req.headers, ...(host.headers ?? {}), 'content-type': 'application/json' };
      if (req.credential !== null) headers['x-goog-api-key'] = req.credential;
      const res = await sendUpstream(req, endpointFor(host.baseUrl, req.route.upstreamModel, req.stream), {
        headers, body: req.body, timeoutMs: host.timeoutMs,
      });
      return withKeyRefusalAs401(res);
    },
    ...geminiTranslation(options.schemaDialect),
  };
}
