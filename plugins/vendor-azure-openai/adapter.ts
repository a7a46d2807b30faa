// The Azure OpenAI adapter: OpenAI's wire at Azure's URLs. A binding's upstream model is the
// deployment name; the host's options choose the API (deployments + api-version, or v1) and the
// credential (the api-key header, or a Microsoft Entra ID token for the host key's client secret).
// The codec is the OpenAI adapter's (this plugin depends on vendor-openai), plus Azure's content
// filter and error details.
import { Readable } from 'node:stream';
import type { ShapeId, UpstreamRequest, UpstreamResponse, VendorAdapter } from '../../core/plugin-api.ts';
import { sendUpstream } from '../../core/plugin-api.ts';
import { setAnswerModel } from '../../core/plugin-api/canonical.ts';
import { filteringInspector, filteringStreamDecoder, withFilterRefusal } from './content-filter.ts';
import { EntraTokenCache } from './entra-token.ts';
import { withFilterDetail } from './errors.ts';
import { AzureHostOptions, hostOptionsOf } from './host-options.ts';
import { azureBaseUrlProblem, azureUrl } from './urls.ts';
import { checkDataSources, dataSourceRefusal } from './data-sources.ts';

export const AZURE_SHAPES: readonly ShapeId[] = ['openai.chat', 'openai.responses', 'openai.embeddings'];

export function createAzureOpenAIAdapter(id: string, openai: VendorAdapter, tokens = new EntraTokenCache()): VendorAdapter {
  const send = async (req: UpstreamRequest): Promise<UpstreamResponse> => {
    const host = req.route.host.spec;
    const options = hostOptionsOf(host.options);
    const checked = req.shape === 'openai.chat' ? checkDataSources(req.body, options.dataSourceEndpoints) : null;
    if (checked && 'refused' in checked) return dataSourceRefusal(checked.refused);
    const body = checked ? checked.body : req.body;
    const url = azureUrl(host.baseUrl, req.shape, req.route.upstreamModel, options, req.search);
    const base = { ...req.headers, ...host.headers, 'content-type': 'application/json' };
    const post = (credential: Record<string, string>) => sendUpstream(req, url, { headers: { ...base, ...credential }, body, timeoutMs: host.timeoutMs });
    // The token goes back with the answer, for the kernel to mask should Azure or a proxy quote it.
    const postToken = async (token: string): Promise<UpstreamResponse> => ({ ...await post({ authorization: `Bearer ${token}` }), sentCredentials: [token] });
    // Proxy mode: the caller's own credential is among the forwarded headers.
    if (req.credential === null) return post({});
    if (!options.entra) return post({ 'api-key': req.credential });
    const entra = options.entra;
    const first = await tokens.token(req, entra, req.credential);
    if ('refused' in first) return refusedResponse(first.refused.status, first.refused.message);
    const res = await postToken(first.token);
    if (res.status !== 401 || !first.cached) return res;
    // A cached token the upstream refused (expired early, revoked): fetch a new one and retry once.
    res.body.resume();
    tokens.forget(entra, req.credential, first.token);
    const fresh = await tokens.token(req, entra, req.credential);
    if ('refused' in fresh) return refusedResponse(fresh.refused.status, fresh.refused.message);
    return postToken(fresh.token);
  };

  return {
    id,
    shapes: AZURE_SHAPES,
    hostOptions: AzureHostOptions,
    baseUrlProblem: azureBaseUrlProblem,
    translationShape: openai.translationShape.bind(openai),
    send,
    encodeRequest: openai.encodeRequest.bind(openai),
    decodeResponse(shape, body, route, request, dropped) {
      const response = openai.decodeResponse(shape, body, route, request, dropped);
      setAnswerModel(response.usage, (body as { model?: unknown } | null)?.model);
      return shape === 'openai.chat' ? withFilterRefusal(response, body) : response;
    },
    streamDecoder(shape, route, request, dropped) {
      const inner = openai.streamDecoder(shape, route, request, dropped);
      return shape === 'openai.chat' ? filteringStreamDecoder(inner) : inner;
    },
    decodeError: (shape, status, body) => withFilterDetail(openai.decodeError(shape, status, body), body),
    // A deployment's name is the operator's: the answer names the model behind it, which prices it.
    usageFromBody: (shape, body) => setAnswerModel(openai.usageFromBody(shape, body), (body as { model?: unknown } | null)?.model),
    streamInspector(shape) {
      const inner = openai.streamInspector(shape);
      return shape === 'openai.chat' ? filteringInspector(inner) : inner;
    },
    ...(openai.usageRequest ? { usageRequest: openai.usageRequest.bind(openai) } : {}),
  };
}

/** The token endpoint's refusal as an Azure-shaped error response (so it counts against the host key). */
function refusedResponse(status: number, message: string): UpstreamResponse {
  const body = Buffer.from(JSON.stringify({ error: { code: 'EntraTokenRefused', message } }));
  return { status: status >= 400 && status < 500 ? 401 : 502, headers: { 'content-type': 'application/json' }, body: Readable.from([body]) };
}
