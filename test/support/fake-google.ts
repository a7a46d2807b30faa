// A fake Google upstream over real HTTP/1.1 and SSE on 127.0.0.1, in Google's wire formats:
//
//   the Gemini API   POST /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse
//                    (x-goog-api-key; a wrong key gets Google's 400 API_KEY_INVALID)
//   Vertex AI        POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent | ...
//                    POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict | :streamRawPredict
//                    (Authorization: Bearer <a token this fake issued and that has not expired>, else 401)
//   OAuth tokens     POST /token (grant_type jwt-bearer): the assertion's RS256 signature is verified
//                    with the service account's public key, and its iss, aud, scope and exp checked,
//                    as Google's token endpoint does; a bad or expired assertion gets 400 invalid_grant.
//
// Gemini SSE frames are CRLF-terminated and have no end marker, as Google sends them. A request
// whose last turn ends with a function (tool) result is answered with text; otherwise, when
// `functionCall` is set and the request declares tools, with that call. setAnswerParts() makes
// Gemini answer with given parts instead (images, code execution): whole, or one frame each.
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

export const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';

export interface FakeGoogleOptions {
  /** Accepted x-goog-api-key values (Gemini API); any other gets Google's 400 API_KEY_INVALID. */
  apiKey?: string | string[];
  /** Service accounts whose assertions the token endpoint accepts (Vertex). */
  serviceAccounts?: ServiceAccountKey[];
  /** Lifetime of issued tokens, in seconds (default 3600). */
  tokenLifetimeS?: number;
  text?: string;
  /** Text chunks of a streamed answer. Default 4. */
  chunks?: number;
  functionCall?: { name: string; args: Record<string, unknown> };
  usage?: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount?: number; cachedContentTokenCount?: number };
}

export interface GoogleRecordedRequest {
  path: string;
  /** gemini-api, vertex-google or vertex-anthropic. */
  api: 'gemini-api' | 'vertex-google' | 'vertex-anthropic';
  model: string;
  method: string;
  project?: string;
  location?: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  json: any;
}

export interface ScriptedAnswer {
  status: number;
  body: unknown;
}

export interface FakeGoogle {
  url: string;
  requests: GoogleRecordedRequest[];
  /** Token requests, accepted or not. */
  tokenRequests: Array<{ accepted: boolean; reason?: string; iss?: string }>;
  enqueue(answer: ScriptedAnswer): void;
  error(code: number, status: string, message: string, reason?: string): unknown;
  /** Ends the life of every token issued so far (Vertex then refuses them with 401). */
  expireTokens(): void;
  /**
   * Gemini answers (function calls aside) with these parts from now on; null for the text again.
   * `frameGapMs` spaces a stream's frames (so a client has the head before the later ones).
   */
  setAnswerParts(parts: unknown[] | null, frameGapMs?: number): void;
  /** From now on, error answers are gzip-compressed (content-encoding: gzip), as a proxy in front of Google may send them. */
  compressErrors(on: boolean): void;
  close(): Promise<void>;
}

export interface ServiceAccountKey {
  clientEmail: string;
  /** The key file's JSON, as Google's console downloads it. */
  json: string;
  publicKey: KeyObject;
}

/** A new service-account key (RSA 2048), the JSON as Google hands it out. */
export function serviceAccountKey(clientEmail = `relay-${randomBytes(3).toString('hex')}@test-project.iam.gserviceaccount.com`): ServiceAccountKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const json = JSON.stringify({
    type: 'service_account', project_id: 'test-project', private_key_id: randomBytes(20).toString('hex'), private_key: pem,
    client_email: clientEmail, client_id: '1234567890', auth_uri: 'https://accounts.google.com/o/oauth2/auth', token_uri: GOOGLE_TOKEN_AUDIENCE,
  });
  return { clientEmail, json, publicKey: createPublicKey(pem) };
}

const GEMINI_API = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const VERTEX = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

function googleError(code: number, status: string, message: string, reason?: string): unknown {
  return { error: { code, message, status, ...(reason ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' }] } : {}) } };
}

function split(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Verifies a JWT bearer assertion as Google's token endpoint does; returns why it is refused, or null. */
function assertionProblem(assertion: string, accounts: ServiceAccountKey[]): { problem: string | null; iss?: string } {
  const pieces = assertion.split('.');
  if (pieces.length !== 3) return { problem: 'not a JWT' };
  const [head, body, signature] = pieces as [string, string, string];
  let header: any;
  let claims: any;
  try {
    header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { problem: 'undecodable JWT' };
  }
  if (header.alg !== 'RS256') return { problem: `alg ${String(header.alg)}`, iss: claims.iss };
  const account = accounts.find((a) => a.clientEmail === claims.iss);
  if (!account) return { problem: 'unknown service account', iss: claims.iss };
  if (!verify('RSA-SHA256', Buffer.from(`${head}.${body}`), account.publicKey, Buffer.from(signature, 'base64url'))) return { problem: 'Invalid JWT Signature.', iss: claims.iss };
  const now = Math.floor(Date.now() / 1000);
  if (claims.aud !== GOOGLE_TOKEN_AUDIENCE) return { problem: `aud ${String(claims.aud)}`, iss: claims.iss };
  if (typeof claims.exp !== 'number' || claims.exp <= now) return { problem: 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe', iss: claims.iss };
  if (typeof claims.iat !== 'number' || claims.iat > now + 60 || claims.exp - claims.iat > 3600) return { problem: 'Invalid JWT: iat/exp', iss: claims.iss };
  if (!String(claims.scope ?? '').split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return { problem: 'scope', iss: claims.iss };
  return { problem: null, iss: claims.iss };
}

export async function startFakeGoogle(options: FakeGoogleOptions = {}): Promise<FakeGoogle> {
  const text = options.text ?? 'Hello from the fake Gemini.';
  const keys = options.apiKey === undefined ? null : new Set([options.apiKey].flat());
  const accounts = options.serviceAccounts ?? [];
  const usage = options.usage ?? { promptTokenCount: 9, candidatesTokenCount: 7 };
  const requests: GoogleRecordedRequest[] = [];
  const tokenRequests: FakeGoogle['tokenRequests'] = [];
  const tokens = new Map<string, number>();
  const queue: ScriptedAnswer[] = [];
  let answerParts: unknown[] | null = null;
  let gzipErrors = false;
  let frameGapMs = 0;

  const usageMetadata = () => ({ ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0) });
  const geminiWantsCall = (json: any): boolean => {
    const last = json?.contents?.[json.contents.length - 1];
    const answered = (last?.parts ?? []).some((p: any) => p.functionResponse);
    return options.functionCall !== undefined && Array.isArray(json?.tools) && !answered;
  };
  const claudeWantsCall = (json: any): boolean => {
    const last = json?.messages?.[json.messages.length - 1];
    const answered = Array.isArray(last?.content) && last.content.some((b: any) => b.type === 'tool_result');
    return options.functionCall !== undefined && Array.isArray(json?.tools) && json.tools.length > 0 && !answered;
  };

  const answerGemini = (res: http.ServerResponse, send: (s: number, b: unknown) => void, model: string, method: string, query: URLSearchParams, json: any) => {
    if (!Array.isArray(json.contents) || json.contents.length === 0) {
      return send(400, googleError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified'));
    }
    const call = geminiWantsCall(json);
    const parts = call ? [{ functionCall: options.functionCall }] : answerParts ?? split(text, options.chunks ?? 4).map((t) => ({ text: t }));
    const base = { modelVersion: model, responseId: `resp-${requests.length}` };
    if (method === 'generateContent') {
      const merged = call || answerParts ? parts : [{ text }];
      return send(200, { candidates: [{ content: { role: 'model', parts: merged }, finishReason: 'STOP', index: 0 }], usageMetadata: usageMetadata(), ...base });
    }
    if (query.get('alt') !== 'sse') return send(400, googleError(400, 'INVALID_ARGUMENT', 'this fake streams only with alt=sse'));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const frames = parts.map((part, i) => {
      const last = i === parts.length - 1;
      const frame = {
        candidates: [{ content: { role: 'model', parts: [part] }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
        usageMetadata: last ? usageMetadata() : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
        ...base,
      };
      return `data: ${JSON.stringify(frame)}\r\n\r\n`;
    });
    if (frameGapMs === 0) {
      for (const frame of frames) res.write(frame);
      res.end();
      return;
    }
    const next = (i: number): void => {
      if (i === frames.length) return void res.end();
      res.write(frames[i]);
      setTimeout(() => next(i + 1), frameGapMs);
    };
    next(0);
  };

  const answerClaude = (res: http.ServerResponse, send: (s: number, b: unknown) => void, model: string, method: string, json: any) => {
    if (json.anthropic_version !== 'vertex-2023-10-16') return send(400, { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic_version: vertex-2023-10-16 is required' } });
    if (model === 'count-tokens') return send(200, { input_tokens: 21 });
    if ('model' in json) return send(400, { type: 'error', error: { type: 'invalid_request_error', message: 'model: Extra inputs are not permitted' } });
    const call = claudeWantsCall(json);
    const id = `msg_vrtx_${randomBytes(6).toString('hex')}`;
    const content = call
      ? [{ type: 'tool_use', id: `toolu_vrtx_${randomBytes(6).toString('hex')}`, name: options.functionCall!.name, input: options.functionCall!.args }]
      : [{ type: 'text', text }];
    const stop = call ? 'tool_use' : 'end_turn';
    const u = { input_tokens: usage.promptTokenCount, output_tokens: usage.candidatesTokenCount, cache_read_input_tokens: usage.cachedContentTokenCount ?? 0, cache_creation_input_tokens: 0 };
    if (method === 'rawPredict') return send(200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null, usage: u });
    if (method !== 'streamRawPredict') return send(404, googleError(404, 'NOT_FOUND', `unknown method ${method}`));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const ev = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    ev('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...u, output_tokens: 1 } } });
    ev('ping', { type: 'ping' });
    if (call) {
      const block = content[0] as { id: string; name: string; input: unknown };
      ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    } else {
      ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      for (const piece of split(text, options.chunks ?? 4)) ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } });
    }
    ev('content_block_stop', { type: 'content_block_stop', index: 0 });
    ev('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.candidatesTokenCount } });
    ev('message_stop', { type: 'message_stop' });
    res.end();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const raw = Buffer.concat(chunks).toString('utf8');
      const send = (status: number, body: unknown) => {
        const gzip = gzipErrors && status >= 400;
        res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
        res.end(gzip ? gzipSync(JSON.stringify(body)) : JSON.stringify(body));
      };
      if (req.method === 'POST' && url.pathname === '/token') {
        const form = new URLSearchParams(raw);
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
          tokenRequests.push({ accepted: false, reason: 'grant_type' });
          return send(400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
        }
        const { problem, iss } = assertionProblem(form.get('assertion') ?? '', accounts);
        tokenRequests.push({ accepted: problem === null, ...(problem ? { reason: problem } : {}), ...(iss ? { iss } : {}) });
        if (problem) return send(400, { error: 'invalid_grant', error_description: problem });
        const token = `ya29.fake-${randomBytes(12).toString('base64url')}`;
        const lifetime = options.tokenLifetimeS ?? 3600;
        tokens.set(token, Date.now() + lifetime * 1000);
        return send(200, { access_token: token, expires_in: lifetime, token_type: 'Bearer' });
      }
      const gemini = GEMINI_API.exec(url.pathname);
      const vertex = VERTEX.exec(url.pathname);
      if (req.method !== 'POST' || (!gemini && !vertex)) return send(404, googleError(404, 'NOT_FOUND', `Not found: ${url.pathname}`));
      let json: any;
      try {
        json = JSON.parse(raw);
      } catch {
        return send(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
      }
      if (gemini) {
        const [, model, method] = gemini as unknown as [string, string, string];
        requests.push({ path: url.pathname, api: 'gemini-api', model: decodeURIComponent(model), method, query: url.searchParams, headers: req.headers, json });
        const key = req.headers['x-goog-api-key'];
        if (keys && (typeof key !== 'string' || !keys.has(key))) {
          return send(400, googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'));
        }
        const scripted = queue.shift();
        if (scripted) return send(scripted.status, scripted.body);
        return answerGemini(res, send, decodeURIComponent(model), method, url.searchParams, json);
      }
      const [, project, location, publisher, model, method] = vertex as unknown as [string, string, string, string, string, string];
      requests.push({
        path: url.pathname, api: publisher === 'google' ? 'vertex-google' : 'vertex-anthropic', model: decodeURIComponent(model), method,
        project, location, query: url.searchParams, headers: req.headers, json,
      });
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const expiresAt = bearer === undefined ? undefined : tokens.get(bearer);
      if (expiresAt === undefined || expiresAt <= Date.now()) {
        return send(401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'ACCESS_TOKEN_EXPIRED'));
      }
      const scripted = queue.shift();
      if (scripted) return send(scripted.status, scripted.body);
      if (publisher === 'google') return answerGemini(res, send, decodeURIComponent(model), method, url.searchParams, json);
      return answerClaude(res, send, decodeURIComponent(model), method, json);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tokenRequests,
    enqueue: (answer) => { queue.push(answer); },
    error: googleError,
    expireTokens: () => { for (const token of tokens.keys()) tokens.set(token, 0); },
    compressErrors: (on) => { gzipErrors = on; },
    setAnswerParts: (parts, gap = 0) => {
      answerParts = parts;
      frameGapMs = gap;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
