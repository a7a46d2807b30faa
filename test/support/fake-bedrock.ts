// A fake AWS Bedrock runtime that speaks the real wire: it verifies each request's SigV4
// signature by recomputing it with AWS's signer (@smithy/signature-v4) from the secret it
// knows, refusing a wrong or unknown one with 403 as AWS does, accepts Bedrock API keys as
// bearer tokens, and answers Converse/InvokeModel with JSON and ConverseStream/
// InvokeModelWithResponseStream in the binary event-stream encoding (@smithy/eventstream-codec).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { MessageHeaders } from '@smithy/types';

export interface AwsKey {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockRequest {
  operation: 'converse' | 'converse-stream' | 'invoke' | 'invoke-with-response-stream' | 'count-tokens';
  modelId: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** How the request authenticated: the access key id, or `bearer`. */
  principal: string;
}

/** One event-stream message: an event with its JSON payload, or an exception. */
export type StreamMessage = { event: string; payload: unknown } | { exception: string; message: string };

export type BedrockAction =
  | { kind: 'json'; status?: number; body: unknown; errorType?: string }
  | { kind: 'events'; messages: StreamMessage[]; /** Bytes per write, to split messages across chunks. */ chunkBytes?: number; /** A pause after each message, as a model generating. */ delayMs?: number }
  | { kind: 'raw'; status: number; contentType: string; body: Buffer; headers?: Record<string, string> };

export type BedrockScript = (req: BedrockRequest) => BedrockAction | undefined;

export interface FakeBedrock {
  url: string;
  region: string;
  requests: BedrockRequest[];
  /** Signatures refused (wrong signature, unknown key, stale date). */
  refused: number;
  script(fn: BedrockScript): void;
  close(): Promise<void>;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream message, as Bedrock frames it. */
export function encodeMessage(m: StreamMessage): Uint8Array {
  if ('exception' in m) {
    const headers: MessageHeaders = {
      ':message-type': { type: 'string', value: 'exception' },
      ':exception-type': { type: 'string', value: m.exception },
      ':content-type': { type: 'string', value: 'application/json' },
    };
    return codec.encode({ headers, body: fromUtf8(JSON.stringify({ message: m.message })) });
  }
  const headers: MessageHeaders = {
    ':message-type': { type: 'string', value: 'event' },
    ':event-type': { type: 'string', value: m.event },
    ':content-type': { type: 'string', value: 'application/json' },
  };
  // Bedrock pads payloads with a "p" field (so lengths do not leak content).
  return codec.encode({ headers, body: fromUtf8(JSON.stringify({ ...(m.payload as object), p: 'abcdefghij' })) });
}

/** An Anthropic SSE event as an InvokeModelWithResponseStream chunk (base64 JSON in `bytes`). */
export function invokeChunk(event: unknown): StreamMessage {
  return { event: 'chunk', payload: { bytes: Buffer.from(JSON.stringify(event)).toString('base64') } };
}

export function encodeStream(messages: StreamMessage[]): Buffer {
  return Buffer.concat(messages.map(encodeMessage));
}

/** A Converse answer of `text` (and, streamed, its events). */
export function converseAnswer(text: string, usage = { inputTokens: 7, outputTokens: 3, totalTokens: 10 }) {
  return {
    json: { output: { message: { role: 'assistant', content: [{ text }] } }, stopReason: 'end_turn', usage, metrics: { latencyMs: 5 } },
    events: [
      { event: 'messageStart', payload: { role: 'assistant' } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: text.slice(0, 3) } } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: text.slice(3) } } },
      { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
      { event: 'messageStop', payload: { stopReason: 'end_turn' } },
      { event: 'metadata', payload: { usage, metrics: { latencyMs: 5 } } },
    ] as StreamMessage[],
  };
}

/** An Anthropic Messages answer of `text` (and, streamed, its events as Bedrock chunks). */
export function messagesAnswer(text: string, model = 'claude-on-bedrock') {
  const usage = { input_tokens: 11, output_tokens: 4 };
  return {
    json: { id: 'msg_bdrk_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage },
    events: [
      invokeChunk({ type: 'message_start', message: { id: 'msg_bdrk_1', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } }),
      invokeChunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      invokeChunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      invokeChunk({ type: 'content_block_stop', index: 0 }),
      invokeChunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 4 } }),
      invokeChunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 11, outputTokenCount: 4 } }),
    ],
  };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, errorType?: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-amzn-requestid': 'req-fake-bedrock',
    ...(errorType ? { 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` } : {}),
  });
  res.end(text);
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

/** Why AWS would refuse this request's signature, or null when it verifies. */
async function signatureProblem(req: http.IncomingMessage, body: Buffer, keys: AwsKey[], region: string): Promise<{ type: string; message: string } | null> {
  const m = AUTH.exec(String(req.headers.authorization ?? ''));
  if (!m) return { type: 'IncompleteSignatureException', message: 'Authorization header requires Credential, SignedHeaders and Signature.' };
  const [, accessKeyId, day, signedRegion, service, signedHeaders, signature] = m;
  const key = keys.find((k) => k.accessKeyId === accessKeyId);
  if (!key) return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (service !== 'bedrock' || signedRegion !== region) return { type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and service bedrock (${region}).` };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const when = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!when || !amzDate.startsWith(day)) return { type: 'IncompleteSignatureException', message: 'x-amz-date is missing or does not match the credential scope.' };
  const date = new Date(Date.UTC(+when[1], +when[2] - 1, +when[3], +when[4], +when[5], +when[6]));
  if (Math.abs(Date.now() - date.getTime()) > 5 * 60_000) return { type: 'InvalidSignatureException', message: 'Signature expired.' };
  if (key.sessionToken !== undefined && req.headers['x-amz-security-token'] !== key.sessionToken) {
    return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }
  // Recompute with AWS's signer over what arrived: the signed headers (the payload hash taken
  // from the bytes received, not from the client's header), the path as sent, the body.
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) {
    if (name === 'x-amz-content-sha256') continue;
    const value = req.headers[name];
    if (value === undefined) return { type: 'InvalidSignatureException', message: `Signed header ${name} is missing.` };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const declared = req.headers['x-amz-content-sha256'];
  if (declared !== undefined && declared !== createHash('sha256').update(body).digest('hex')) {
    return { type: 'InvalidSignatureException', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  }
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  const signer = new SignatureV4({ service: 'bedrock', region, sha256: Sha256, credentials: key });
  const expected = await signer.sign({
    method: req.method, protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body,
  } as never, { signingDate: date }) as unknown as { headers: Record<string, string> };
  const want = /Signature=([0-9a-f]{64})/.exec(expected.headers.authorization)?.[1];
  if (want !== signature) {
    return { type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.' };
  }
  return null;
}

function defaultAction(req: BedrockRequest): BedrockAction {
  if (req.operation === 'count-tokens') {
    // A count from the InvokeModel body (base64 in input.invokeModel.body) or the Converse request
    // (input.converse), exactly one of them as AWS's union takes it: its length in 4-byte tokens.
    const input = req.body.input as { invokeModel?: { body?: unknown }; converse?: unknown } | undefined;
    const invoke = input?.invokeModel?.body;
    if (typeof invoke === 'string' && input?.converse === undefined) return { kind: 'json', body: { inputTokens: Math.ceil(Buffer.from(invoke, 'base64').length / 4) } };
    const converse = input?.converse as { messages?: unknown } | undefined;
    if (converse && Array.isArray(converse.messages) && input?.invokeModel === undefined) return { kind: 'json', body: { inputTokens: Math.ceil(JSON.stringify(converse).length / 4) } };
    return { kind: 'json', status: 400, body: { message: 'input must hold exactly one of invokeModel.body and converse.messages' }, errorType: 'ValidationException' };
  }
  if (req.operation === 'converse') return { kind: 'json', body: converseAnswer('Hello from Bedrock').json };
  if (req.operation === 'converse-stream') return { kind: 'events', messages: converseAnswer('Hello from Bedrock').events };
  if (req.operation === 'invoke') return { kind: 'json', body: messagesAnswer('Hello from Claude on Bedrock', req.modelId).json };
  return { kind: 'events', messages: messagesAnswer('Hello from Claude on Bedrock', req.modelId).events };
}

export async function startFakeBedrock(options: { keys?: AwsKey[]; apiKeys?: string[]; region?: string } = {}): Promise<FakeBedrock> {
  const keys = options.keys ?? [];
  const apiKeys = options.apiKeys ?? [];
  const region = options.region ?? 'us-east-1';
  const scripts: BedrockScript[] = [];
  const requests: BedrockRequest[] = [];
  let refused = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/.exec(req.url ?? '');
        if (req.method !== 'POST' || !route) return sendJson(res, 404, { message: 'Not Found' }, 'UnknownOperationException');
        const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
        let principal: string;
        if (bearer !== undefined) {
          if (!apiKeys.includes(bearer)) {
            refused++;
            return sendJson(res, 403, { message: 'Invalid API Key format: Must start with pre-defined prefix' }, 'AccessDeniedException');
          }
          principal = 'bearer';
        } else {
          const problem = await signatureProblem(req, body, keys, region);
          if (problem) {
            refused++;
            return sendJson(res, 403, { message: problem.message }, problem.type);
          }
          principal = /Credential=([^/]+)/.exec(String(req.headers.authorization))![1];
        }
        let json: Record<string, unknown>;
        try {
          json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        } catch {
          return sendJson(res, 400, { message: 'Malformed input request, please reformat your input and try again.' }, 'ValidationException');
        }
        const recorded: BedrockRequest = { operation: route[2] as BedrockRequest['operation'], modelId: decodeURIComponent(route[1]), headers: req.headers, body: json, principal };
        requests.push(recorded);
        let action: BedrockAction | undefined;
        for (const script of scripts) {
          action = script(recorded);
          if (action) break;
        }
        action ??= defaultAction(recorded);
        if (action.kind === 'json') return sendJson(res, action.status ?? 200, action.body, action.errorType);
        if (action.kind === 'raw') {
          res.writeHead(action.status, { 'content-type': action.contentType, 'content-length': action.body.length, ...action.headers });
          return res.end(action.body);
        }
        res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-fake-bedrock' });
        if (action.delayMs !== undefined) {
          for (const message of action.messages) {
            if (res.destroyed) return;
            res.write(encodeStream([message]));
            await new Promise((r) => setTimeout(r, action.delayMs));
          }
          return res.end();
        }
        const bytes = encodeStream(action.messages);
        const step = action.chunkBytes ?? bytes.length;
        for (let i = 0; i < bytes.length; i += step) {
          res.write(bytes.subarray(i, i + step));
          await new Promise((r) => setImmediate(r));
        }
        res.end();
      })().catch((err: Error) => {
        if (!res.headersSent) sendJson(res, 500, { message: err.message }, 'InternalServerException');
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    region,
    requests,
    get refused() { return refused; },
    script(fn) { scripts.push(fn); },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
