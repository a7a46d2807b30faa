// Upstream URLs. The Gemini API: {baseUrl}/models/{model}:{method}. Vertex AI:
// {baseUrl}/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method},
// with baseUrl https://{location}-aiplatform.googleapis.com/v1 (https://aiplatform.googleapis.com/v1 for global).
import { joinUrl } from '../../core/plugin-api.ts';
import type { VertexOptions } from './host-options.ts';

export type Publisher = 'google' | 'anthropic';

/** `models/gemini-2.5-flash`, `publishers/google/models/gemini-2.5-flash` and `gemini-2.5-flash` name one model. */
export function modelName(upstreamModel: string): string {
  return upstreamModel.replace(/^(?:publishers\/[^/]+\/)?models\//, '');
}

export function geminiApiUrl(baseUrl: string, upstreamModel: string, stream: boolean): string {
  const method = stream ? ':streamGenerateContent?alt=sse' : ':generateContent';
  return joinUrl(baseUrl, `/models/${encodeURIComponent(modelName(upstreamModel))}`) + method;
}

/** A path segment; `@` is kept, as Vertex's model versions (claude-sonnet-4-5@20250929) are written. */
function segment(value: string): string {
  return encodeURIComponent(value).replace(/%40/g, '@');
}

export function vertexUrl(baseUrl: string, options: VertexOptions, publisher: Publisher, upstreamModel: string, stream: boolean): string {
  const method = publisher === 'anthropic'
    ? (stream ? ':streamRawPredict' : ':rawPredict')
    : (stream ? ':streamGenerateContent?alt=sse' : ':generateContent');
  const path = `/projects/${segment(options.project)}/locations/${segment(options.location)}`
    + `/publishers/${publisher}/models/${segment(modelName(upstreamModel))}`;
  return joinUrl(baseUrl, path) + method;
}
