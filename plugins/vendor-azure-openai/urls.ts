// Where each shape lives on an Azure OpenAI resource. Chat Completions and Embeddings are per
// deployment; Responses is per resource (the deployment is the body's model), as in the v1 API.
import { joinUrl, type ShapeId } from '../../core/plugin-api.ts';
import type { hostOptionsOf } from './host-options.ts';

const V1_PATHS: Record<string, string> = {
  'openai.chat': '/openai/v1/chat/completions',
  'openai.responses': '/openai/v1/responses',
  'openai.embeddings': '/openai/v1/embeddings',
};

function deploymentPath(shape: ShapeId, deployment: string): string | undefined {
  const d = encodeURIComponent(deployment);
  if (shape === 'openai.chat') return `/openai/deployments/${d}/chat/completions`;
  if (shape === 'openai.embeddings') return `/openai/deployments/${d}/embeddings`;
  if (shape === 'openai.responses') return '/openai/responses';
  return undefined;
}

/**
 * The URL for one request: the endpoint under the host's base URL, the client's own query
 * (passthrough) kept, and api-version set on the deployments API (its value wins over the client's).
 */
export function azureUrl(baseUrl: string, shape: ShapeId, deployment: string, options: ReturnType<typeof hostOptionsOf>, search = ''): string {
  const path = options.api === 'v1' ? V1_PATHS[shape] : deploymentPath(shape, deployment);
  if (!path) throw new Error(`the azure-openai adapter does not speak ${shape}`);
  const url = new URL(joinUrl(baseUrl, path));
  url.search = search;
  if (options.api === 'deployments') url.searchParams.set('api-version', options.apiVersion);
  return url.toString();
}

// A base URL that already holds Azure's /openai path (or a deployment's endpoint): Relay appends it again.
const HOLDS_AZURE_PATH = /\/openai(?:\/v1|\/deployments(?:\/.*)?|\/responses)?\/*$/;

/** Why a host's base URL cannot work for Azure OpenAI, or null (checked when the host is written). */
export function azureBaseUrlProblem(baseUrl: string): string | null {
  const path = new URL(baseUrl).pathname;
  const held = HOLDS_AZURE_PATH.exec(path);
  if (!held) return null;
  return `ends with ${held[0].replace(/\/+$/, '')}: give the resource endpoint without that path, e.g. https://my-resource.openai.azure.com; Relay appends /openai/deployments/{deployment}/... (or /openai/v1/... with options.api v1)`;
}
