// The schema of a Google host's spec.options, which the kernel checks on every host write (a
// 400 naming the option): the Gemini API (an API key) or Vertex AI (a project and a location,
// a service-account key or workload identity).
import { Type, type Static } from '../../core/plugin-api.ts';

const TokenUrl = Type.String({
  pattern: '^https?://', maxLength: 2048,
  description: "Where service-account tokens are fetched (default Google's, https://oauth2.googleapis.com/token); for a private endpoint or a test.",
});

export const VertexOptions = Type.Object({
  mode: Type.Literal('vertex'),
  project: Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-z0-9][a-z0-9.:-]*$', description: 'The Google Cloud project id.' }),
  location: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$', description: 'The Vertex AI location, e.g. us-central1, europe-west4 or global.' }),
  auth: Type.Optional(Type.Union([Type.Literal('service-account'), Type.Literal('workload-identity')], {
    description: "service-account (default): the host key's value is a service-account JSON key; workload-identity: Google's default credentials of the machine Relay runs on (the host key's value is not used).",
  })),
  tokenUrl: Type.Optional(TokenUrl),
}, { additionalProperties: false });

export const GeminiApiOptions = Type.Object({
  mode: Type.Optional(Type.Literal('gemini', { description: 'The Gemini API (default): the host key is an API key, sent in x-goog-api-key.' })),
}, { additionalProperties: false });

/** Gemini models: the Gemini API or Vertex AI. */
export const GoogleHostOptions = Type.Union([GeminiApiOptions, VertexOptions]);
/** Claude on Vertex AI: Vertex only. */
export const VertexAnthropicHostOptions = VertexOptions;

export type VertexOptions = Static<typeof VertexOptions>;
export type GoogleHostOptions = Static<typeof GoogleHostOptions>;

export function isVertex(options: unknown): options is VertexOptions {
  return (options as { mode?: unknown } | undefined)?.mode === 'vertex';
}
