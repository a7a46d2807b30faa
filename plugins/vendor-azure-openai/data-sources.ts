// Azure's "On Your Data" (`data_sources` in a Chat Completions request) has Azure OpenAI search an
// index with the credential each source names. With a managed identity that credential is the Azure
// OpenAI resource's own, used for whoever sends the request: any caller of the host could search
// another team's index. Such a source passes only when the host's `dataSourceEndpoints` lists its
// endpoint; the request is answered here, as Azure answers a request it refuses, and never sent. A
// body with data sources goes to Azure as Relay parsed it, so that a key written twice cannot mean
// one thing to this check and another to Azure.
import { Readable } from 'node:stream';
import type { UpstreamResponse } from '../../core/plugin-api.ts';
import { holdsEscapedLetter } from '../../core/plugin-api/canonical.ts';

const MEMBER_NAMES = ['data_sources', 'dataSources'];
/** `system_assigned_managed_identity`, `user_assigned_managed_identity`. */
const MANAGED = /managed_identity/i;

interface DataSource {
  parameters?: { endpoint?: unknown; authentication?: { type?: unknown } };
}

function originOf(endpoint: unknown): string | null {
  if (typeof endpoint !== 'string') return null;
  try {
    return new URL(endpoint).origin.toLowerCase();
  } catch {
    return null;
  }
}

export type DataSourceCheck = { refused: string } | { body: string } | null;

/**
 * A body without data sources: null (sent as it came). One with a managed-identity source whose
 * endpoint the host does not list: why it is refused. Otherwise the body to send, as parsed here.
 */
export function checkDataSources(body: Buffer | string, allowed: readonly string[] | undefined): DataSourceCheck {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (!holdsEscapedLetter(bytes) && !MEMBER_NAMES.some((name) => bytes.includes(name))) return null;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return null; // not JSON: Azure refuses it itself
  }
  const sources = MEMBER_NAMES.flatMap((name) => (Array.isArray(parsed?.[name]) ? parsed[name] as DataSource[] : []));
  if (sources.length === 0) return null;
  const listed = new Set((allowed ?? []).map(originOf));
  for (const source of sources) {
    const auth = source?.parameters?.authentication?.type;
    if (typeof auth !== 'string' || !MANAGED.test(auth)) continue;
    const origin = originOf(source.parameters?.endpoint);
    if (origin === null || !listed.has(origin)) {
      return {
        refused: `a data source searched with the Azure OpenAI resource's managed identity (${auth}) at ${origin ?? 'no endpoint'}: `
          + "the identity is the resource's, used for whoever sends the request, and the host's spec.options.dataSourceEndpoints does not list that endpoint",
      };
    }
  }
  return { body: JSON.stringify(parsed) };
}

/** The refusal as Azure would answer a request it refuses: a 400 in its error shape, for the caller to read. */
export function dataSourceRefusal(problem: string): UpstreamResponse {
  const body = Buffer.from(JSON.stringify({
    error: { code: 'RelayDataSourceRefused', type: 'invalid_request_error', param: 'data_sources', message: `Relay did not send the request: ${problem}.` },
  }));
  return { status: 400, headers: { 'content-type': 'application/json' }, body: Readable.from([body]) };
}
