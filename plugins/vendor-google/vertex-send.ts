// Sends a request to Vertex AI with an OAuth token. A 401 from Vertex (a revoked token, or one
// that expired early) is answered once more with a freshly fetched token; a key Google refuses
// to issue a token for is reported as a 401 in Google's error shape, so the pipeline marks the
// host key invalid and fails over as it does for any refused key.
import { Readable } from 'node:stream';
import { sendUpstream, type UpstreamRequest, type UpstreamResponse } from '../../core/plugin-api.ts';
import type { VertexTokens } from './access-token.ts';
import type { VertexOptions } from './host-options.ts';

export function refusedResponse(message: string): UpstreamResponse {
  const body = JSON.stringify({ error: { code: 401, message, status: 'UNAUTHENTICATED' } });
  return { status: 401, headers: { 'content-type': 'application/json' }, body: Readable.from([Buffer.from(body)]) };
}

export async function sendToVertex(req: UpstreamRequest, url: string, body: Buffer | string, tokens: VertexTokens, options: VertexOptions): Promise<UpstreamResponse> {
  const host = req.route.host.spec;
  // The token goes back with the answer, for the kernel to mask should Vertex or a proxy quote it.
  const send = async (token: string): Promise<UpstreamResponse> => ({
    ...await sendUpstream(req, url, {
      headers: { ...req.headers, ...(host.headers ?? {}), 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body, timeoutMs: host.timeoutMs,
    }),
    sentCredentials: [token],
  });
  let token = await tokens.token(req.credential, options);
  if (!token.ok) return refusedResponse(token.message);
  const first = await send(token.token);
  if (first.status !== 401) return first;
  first.body.resume();
  tokens.invalidate(req.credential, options);
  token = await tokens.token(req.credential, options);
  if (!token.ok) return refusedResponse(token.message);
  return send(token.token);
}
