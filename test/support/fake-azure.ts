// A fake Azure OpenAI resource and Microsoft Entra ID token endpoint, speaking their real wire:
// deployment URLs (/openai/deployments/{deployment}/chat/completions|embeddings), /openai/responses
// and the v1 API (/openai/v1/...), the api-version rules (missing: 404 "Resource not found";
// unknown: 400 "API version not supported"; Responses from 2025-03-01-preview), the api-key header
// or an Entra bearer token (an expired one is refused with 401, as Azure does), Azure's error
// bodies, and the content filter's annotations (prompt_filter_results, content_filter_results,
// finish_reason "content_filter" for a prompt containing FILTER_ME).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { openai, type BodyOptions } from './fake-upstream.ts';

export const AZURE_API_VERSIONS = ['2024-06-01', '2024-10-21', '2025-03-01-preview', '2025-04-01-preview'];
const RESPONSES_SINCE = '2025-03-01-preview';

export interface FakeAzureOptions {
  /** The resource's api-key (any other is refused). */
  apiKey?: string;
  /** Deployment name -> model it serves. */
  deployments?: Record<string, string>;
  /** The Entra app the token endpoint knows. */
  entra?: { tenantId: string; clientId: string; clientSecret: string; lifetimeSeconds?: number };
  /**
   * A fake upstream (startFakeUpstream's url) that answers for the model: a request Azure accepts
   * is forwarded there as /v1/chat/completions, /v1/responses or /v1/embeddings (for scripted
   * turns, e.g. an agent's tool round trip) instead of the built-in greeting.
   */
  backend?: string;
}

export interface AzureRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface FakeAzure {
  url: string;
  /** Every request to the resource (not the token endpoint), in order. */
  requests: AzureRequest[];
  /** Every token request, in order (the form, secret included: test-only). */
  tokenRequests: URLSearchParams[];
  /** Tokens issued: value -> expiry (ms since epoch). */
  tokens: Map<string, number>;
  /** Makes every issued token expire now (Azure then refuses it). */
  expireTokens(): void;
  close(): Promise<void>;
}

const SAFE = { filtered: false, severity: 'safe' };
const SAFE_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const FILTERED_RESULTS = { ...SAFE_RESULTS, violence: { filtered: true, severity: 'high' } };
const promptFilterResults = () => [{ prompt_index: 0, content_filter_results: SAFE_RESULTS }];

function azureError(res: ServerResponse, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'apim-request-id': randomBytes(8).toString('hex') });
  res.end(JSON.stringify({ error: { code, message, ...extra } }));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function promptText(body: Record<string, unknown>): string {
  return JSON.stringify(body.messages ?? body.input ?? '');
}

/** Azure's chat answer: OpenAI's, with the filter annotations (and the filter applied). */
function chatAnswer(res: ServerResponse, body: Record<string, unknown>, model: string): void {
  const filtered = promptText(body).includes('FILTER_ME');
  const options: BodyOptions = { model, text: filtered ? 'Here is how to' : 'Hello from Azure.', chunks: 3 };
  if (body.stream !== true) {
    const completion = openai.chatCompletion(options) as { choices: Array<Record<string, unknown>> };
    for (const choice of completion.choices) {
      choice.content_filter_results = filtered ? FILTERED_RESULTS : SAFE_RESULTS;
      if (filtered) {
        choice.finish_reason = 'content_filter';
        choice.message = { role: 'assistant', content: null };
      }
    }
    json(res, 200, { ...completion, prompt_filter_results: promptFilterResults() });
    return;
  }
  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  // Azure's first chunk: no choices, no id, only the prompt's filter results.
  res.write(`data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptFilterResults() })}\n\n`);
  for (const frame of openai.chatChunks({ ...options, includeUsage })) {
    const data = frame.slice('data: '.length).trim();
    if (data === '[DONE]') {
      res.write(frame);
      continue;
    }
    const chunk = JSON.parse(data) as { choices: Array<Record<string, unknown>> };
    for (const choice of chunk.choices) {
      if (choice.finish_reason) {
        choice.content_filter_results = filtered ? FILTERED_RESULTS : SAFE_RESULTS;
        if (filtered) choice.finish_reason = 'content_filter';
      }
    }
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end();
}

function responsesAnswer(res: ServerResponse, body: Record<string, unknown>, model: string): void {
  const options: BodyOptions = { model, text: 'Hello from Azure.', chunks: 3 };
  if (body.stream !== true) return json(res, 200, openai.response(options));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const frame of openai.responseEvents(options)) res.write(frame);
  res.end();
}

async function forward(res: ServerResponse, url: string, body: string): Promise<void> {
  const upstream = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
  if (upstream.body) for await (const chunk of upstream.body) res.write(chunk);
  res.end();
}

export async function startFakeAzure(options: FakeAzureOptions = {}): Promise<FakeAzure> {
  const deployments = options.deployments ?? { 'gpt-4o-prod': 'gpt-4o-2024-11-20' };
  const requests: AzureRequest[] = [];
  const tokenRequests: URLSearchParams[] = [];
  const tokens = new Map<string, number>();

  const handleToken = (res: ServerResponse, tenant: string, form: URLSearchParams): void => {
    tokenRequests.push(form);
    const entra = options.entra;
    if (!entra || tenant !== entra.tenantId) return json(res, 400, { error: 'invalid_tenant', error_description: `AADSTS90002: Tenant '${tenant}' not found.` });
    if (form.get('grant_type') !== 'client_credentials') return json(res, 400, { error: 'unsupported_grant_type', error_description: 'AADSTS70003: The app requested an unsupported grant type.' });
    if (form.get('client_id') !== entra.clientId) return json(res, 400, { error: 'unauthorized_client', error_description: `AADSTS700016: Application with identifier '${form.get('client_id')}' was not found.` });
    if (form.get('client_secret') !== entra.clientSecret) return json(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
    if (form.get('scope') !== 'https://cognitiveservices.azure.com/.default') return json(res, 400, { error: 'invalid_scope', error_description: 'AADSTS70011: The provided value for scope is not valid.' });
    const lifetime = entra.lifetimeSeconds ?? 3599;
    const token = `eyJ0eXAi.${randomBytes(12).toString('base64url')}`;
    tokens.set(token, Date.now() + lifetime * 1000);
    json(res, 200, { token_type: 'Bearer', expires_in: lifetime, ext_expires_in: lifetime, access_token: token });
  };

  const authorized = (req: IncomingMessage): boolean => {
    const key = req.headers['api-key'];
    if (key !== undefined) return options.apiKey !== undefined && key === options.apiKey;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const expiry = bearer === undefined ? undefined : tokens.get(bearer);
    return expiry !== undefined && Date.now() < expiry;
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://azure.local');
      const text = await readBody(req);
      const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
      if (token && req.method === 'POST') return handleToken(res, decodeURIComponent(token[1]), new URLSearchParams(text));
      requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body: text });
      if (!authorized(req)) {
        return req.headers['api-key'] !== undefined
          ? azureError(res, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.')
          : azureError(res, 401, '401', 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.');
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return azureError(res, 400, 'BadRequest', 'The request body is not valid JSON.');
      }
      const v1 = /^\/openai\/v1\/(chat\/completions|responses|embeddings)$/.exec(url.pathname);
      const perDeployment = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(url.pathname);
      const resourceResponses = url.pathname === '/openai/responses';
      if (!v1 && !perDeployment && !resourceResponses) return azureError(res, 404, '404', 'Resource not found');
      let deployment: string;
      let endpoint: string;
      if (v1) {
        const version = url.searchParams.get('api-version');
        if (version !== null && version !== 'preview' && version !== 'latest') return azureError(res, 400, 'BadRequest', 'API version not supported');
        deployment = String(body.model ?? '');
        endpoint = v1[1];
      } else {
        const version = url.searchParams.get('api-version');
        if (version === null) return azureError(res, 404, '404', 'Resource not found');
        if (!AZURE_API_VERSIONS.includes(version)) return azureError(res, 400, 'BadRequest', 'API version not supported');
        if (resourceResponses && version < RESPONSES_SINCE) return azureError(res, 400, 'BadRequest', `Azure OpenAI Responses API is enabled only for api-version ${RESPONSES_SINCE} and later`);
        deployment = perDeployment ? decodeURIComponent(perDeployment[1]) : String(body.model ?? '');
        endpoint = perDeployment ? perDeployment[2] : 'responses';
      }
      const model = deployments[deployment];
      if (model === undefined) {
        return azureError(res, 404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');
      }
      if (options.backend) return forward(res, `${options.backend}/v1/${endpoint}`, text);
      if (endpoint === 'chat/completions') return chatAnswer(res, body, model);
      if (endpoint === 'responses') return responsesAnswer(res, body, model);
      return json(res, 200, openai.embeddings({ model, inputs: Array.isArray(body.input) ? body.input.length : 1 }));
    })().catch((err: unknown) => {
      if (!res.headersSent) azureError(res, 500, 'InternalServerError', String(err));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests, tokenRequests, tokens,
    expireTokens() {
      for (const token of tokens.keys()) tokens.set(token, 0);
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
