// The schema of an Azure OpenAI host's spec.options: which API (deployment URLs with an
// api-version, or the version-less /openai/v1/ API) and how to authenticate.
import { Type, type Static } from '../../core/plugin-api.ts';

export const DEFAULT_API_VERSION = '2024-10-21';
export const DEFAULT_ENTRA_SCOPE = 'https://cognitiveservices.azure.com/.default';

const EntraOptions = Type.Object({
  tenantId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9.-]+$', description: 'The Microsoft Entra tenant (directory) id or domain.' }),
  clientId: Type.String({ minLength: 1, maxLength: 100, description: "The app registration's client (application) id; its client secret is the host key." }),
  tokenUrl: Type.Optional(Type.String({
    pattern: '^https?://', maxLength: 2048,
    description: 'The token endpoint. Default: https://login.microsoftonline.com/{tenantId}/oauth2/v2.0/token.',
  })),
  scope: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: `The scope asked for. Default: ${DEFAULT_ENTRA_SCOPE}.` })),
}, { additionalProperties: false, description: 'Authenticate with Microsoft Entra ID (client credentials) instead of the api-key header.' });

export const AzureHostOptions = Type.Object({
  api: Type.Optional(Type.Union([Type.Literal('deployments'), Type.Literal('v1')], {
    default: 'deployments',
    description: 'deployments: {baseUrl}/openai/deployments/{deployment}/...?api-version=...; v1: the version-less {baseUrl}/openai/v1/... API (the deployment goes in the body\'s model).',
  })),
  apiVersion: Type.Optional(Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}(-preview)?$', default: DEFAULT_API_VERSION,
    description: `The api-version query parameter of the deployments API (default ${DEFAULT_API_VERSION}; Responses needs 2025-03-01-preview or later).`,
  })),
  entra: Type.Optional(EntraOptions),
  dataSourceEndpoints: Type.Optional(Type.Array(Type.String({
    pattern: '^https://[A-Za-z0-9.-]+(:\\d+)?/?$', maxLength: 512,
    description: 'An endpoint, e.g. https://shared-search.search.windows.net.',
  }), {
    maxItems: 100,
    description: "Endpoints that a Chat request's data_sources (On Your Data) may search with the Azure OpenAI resource's managed identity, for whoever sends it; any other such source is refused (400). Sources that bring their own credential (an API key) pass. Default: none.",
  })),
}, { additionalProperties: false });

export type AzureHostOptions = Static<typeof AzureHostOptions>;
export type EntraOptions = Static<typeof EntraOptions>;

/** A host's options with defaults filled (the kernel stores them as written). */
export function hostOptionsOf(options: Record<string, unknown> | undefined): AzureHostOptions & { api: 'deployments' | 'v1'; apiVersion: string } {
  const o = (options ?? {}) as AzureHostOptions;
  return { ...o, api: o.api ?? 'deployments', apiVersion: o.apiVersion ?? DEFAULT_API_VERSION };
}
