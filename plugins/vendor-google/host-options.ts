// The schema of a Google host's spec.options, which the kernel checks on every host write (a
// 400 naming the option): the Gemini API (an API key) or Vertex AI (a project and a location,
// a service-account key or workload identity).
import { Type, type Static } from '../../core/plugin-api.ts';

const TokenUrl = Type.String({
  pattern: '^https?://', maxLength: 2048,
  description: "Where service-account tokens are fetched (default Google's, https://oauth2.googleapis.com/token); for a private endpoint or a test.",
});

const AUTH_DESCRIPTION = "service-account (default): the host key's value is a service-account JSON key; workload-identity: Google's default "
  + "credentials of the machine Relay runs on (the host key's value is not used; only when the plugin's workloadIdentity option is on).";

/** Media URLs Gemini reads under the host's own project (a gs:// object, a Gemini API file) that any caller may name. */
const StorageLocations = Type.Optional(Type.Array(Type.String({
  pattern: '^(gs://[a-z0-9][a-z0-9._-]{1,220}/|https://([a-z0-9-]+\\.)*googleapis\\.com/)([^?#]*/)?$', maxLength: 1024,
  description: 'A prefix ending in /: gs://bucket/ or gs://bucket/folder/, or https://generativelanguage.googleapis.com/ for the Gemini API\'s uploaded files.',
}), {
  maxItems: 100,
  description: "Prefixes of gs:// objects and Gemini API files a caller may name as an image or document (Gemini reads them with the host's own credentials, for whoever names them); any other such location is refused (403). Default: none.",
}));

/** Vertex AI options; `workload-identity` is offered only when the operator turned it on in the config. */
export function vertexOptions(allowWorkloadIdentity: boolean) {
  return Type.Object({
    mode: Type.Literal('vertex'),
    project: Type.String({ minLength: 1, maxLength: 128, pattern: '^[a-z0-9][a-z0-9.:-]*$', description: 'The Google Cloud project id.' }),
    location: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$', description: 'The Vertex AI location, e.g. us-central1, europe-west4 or global.' }),
    auth: Type.Optional(allowWorkloadIdentity
      ? Type.Union([Type.Literal('service-account'), Type.Literal('workload-identity')], { description: AUTH_DESCRIPTION })
      // A pattern, not a literal: a wrong value here is this option's error, not a sign of another mode.
      : Type.Unsafe<'service-account'>(Type.String({ pattern: '^service-account$', description: AUTH_DESCRIPTION }))),
    tokenUrl: Type.Optional(TokenUrl),
    storageLocations: StorageLocations,
  }, { additionalProperties: false });
}

export const GeminiApiOptions = Type.Object({
  mode: Type.Optional(Type.Literal('gemini', { description: 'The Gemini API (default): the host key is an API key, sent in x-goog-api-key.' })),
  storageLocations: StorageLocations,
}, { additionalProperties: false });

/** Gemini models: the Gemini API or Vertex AI. */
export const googleHostOptions = (allowWorkloadIdentity: boolean) => Type.Union([GeminiApiOptions, vertexOptions(allowWorkloadIdentity)]);

export type VertexOptions = Static<ReturnType<typeof vertexOptions>>;

export function isVertex(options: unknown): options is VertexOptions {
  return (options as { mode?: unknown } | undefined)?.mode === 'vertex';
}

/**
 * Whether Gemini would read `url` with the host's own credentials: anything but a public http(s)
 * URL, which it fetches as anyone would (a gs:// object, a file under a googleapis.com API).
 */
export function readsHostStorage(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return true;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return true;
  const host = parsed.hostname.replace(/\.$/, '');
  return host === 'googleapis.com' || host.endsWith('.googleapis.com');
}
