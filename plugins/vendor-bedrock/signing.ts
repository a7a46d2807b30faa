// SigV4 signing of a Bedrock runtime request with AWS's own signer (@smithy/signature-v4), as
// the AWS SDK signs it: service `bedrock`, the host's region, the path escaped once more.
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity } from '@smithy/types';

export const SIGNING_SERVICE = 'bedrock';

export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** The signer for one region and identity (a fresh one per request: identities rotate). */
export function signerFor(region: string, identity: AwsCredentialIdentity): SignatureV4 {
  return new SignatureV4({ service: SIGNING_SERVICE, region, sha256: Sha256, credentials: identity });
}

/** The request in the form the signer reads (path as sent on the wire, headers lowercased). */
export function httpRequestOf(req: SignableRequest) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  headers.host = req.url.host;
  const query: Record<string, string> = {};
  for (const [k, v] of req.url.searchParams) query[k] = v;
  return {
    method: req.method, protocol: req.url.protocol, hostname: req.url.hostname, port: req.url.port ? Number(req.url.port) : undefined,
    path: req.url.pathname, query, headers, body: req.body,
  };
}

/** The headers to send: the request's own plus host, x-amz-date, x-amz-content-sha256 and authorization. */
export async function signedHeaders(req: SignableRequest, region: string, identity: AwsCredentialIdentity, signingDate?: Date): Promise<Record<string, string>> {
  const signed = await signerFor(region, identity).sign(httpRequestOf(req) as never, signingDate ? { signingDate } : {}) as unknown as { headers: Record<string, string> };
  const out: Record<string, string> = { ...signed.headers };
  // undici sets host from the URL itself.
  delete out.host;
  return out;
}
