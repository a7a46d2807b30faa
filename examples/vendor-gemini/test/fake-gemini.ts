// A fake Gemini upstream over real HTTP/1.1 and SSE on 127.0.0.1, in Google's wire format:
// POST /v1beta/models/{model}:generateContent (JSON) and :streamGenerateContent?alt=sse
// (one `data:` frame per chunk, CRLF-terminated as Google sends them, no end marker).
//
//   const fake = await startFakeGemini({ apiKey: 'AIza-host', text: 'Hello there' });
//   ... host baseUrl `${fake.url}/v1beta` ...
//   fake.enqueue({ status: 429, body: fake.error(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded') });
//
// A request whose last content ends with a functionResponse is answered with text; otherwise,
// when `functionCall` is set and the request declares tools, with that function call.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeGeminiOptions {
  /** Accepted x-goog-api-key values; any other gets Google's 400 API_KEY_INVALID. */
  apiKey?: string | string[];
  text?: string;
  /** Text chunks of a streamed answer. Default 4. */
  chunks?: number;
  functionCall?: { name: string; args: Record<string, unknown> };
  usage?: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount?: number; cachedContentTokenCount?: number };
}

export interface GeminiRecordedRequest {
  path: string;
  model: string;
  method: 'generateContent' | 'streamGenerateContent';
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  json: any;
}

export interface ScriptedAnswer {
  status: number;
  body: unknown;
}

export interface FakeGemini {
  url: string;
  requests: GeminiRecordedRequest[];
  enqueue(answer: ScriptedAnswer): void;
  error(code: number, status: string, message: string, reason?: string): unknown;
  close(): Promise<void>;
}

const PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

function googleError(code: number, status: string, message: string, reason?: string): unknown {
  return { error: { code, message, status, ...(reason ? { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' }] } : {}) } };
}

function split(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const text = options.text ?? 'Hello from the fake Gemini.';
  const keys = options.apiKey === undefined ? null : new Set([options.apiKey].flat());
  const usage = options.usage ?? { promptTokenCount: 9, candidatesTokenCount: 7 };
  const requests: GeminiRecordedRequest[] = [];
  const queue: ScriptedAnswer[] = [];

  const usageMetadata = () => ({ ...usage, totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount + (usage.thoughtsTokenCount ?? 0) });
  const wantsFunctionCall = (json: any): boolean => {
    const last = json?.contents?.[json.contents.length - 1];
    const answered = (last?.parts ?? []).some((p: any) => p.functionResponse);
    return options.functionCall !== undefined && Array.isArray(json?.tools) && !answered;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
        res.end(JSON.stringify(body));
      };
      const match = PATH.exec(url.pathname);
      if (req.method !== 'POST' || !match) return send(404, googleError(404, 'NOT_FOUND', `Not found: ${url.pathname}`));
      let json: any;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
      }
      const [, model, method] = match as unknown as [string, string, 'generateContent' | 'streamGenerateContent'];
      requests.push({ path: url.pathname, model: decodeURIComponent(model), method, query: url.searchParams, headers: req.headers, json });
      const key = req.headers['x-goog-api-key'];
      if (keys && (typeof key !== 'string' || !keys.has(key))) {
        return send(400, googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'API_KEY_INVALID'));
      }
      const scripted = queue.shift();
      if (scripted) return send(scripted.status, scripted.body);
      if (!Array.isArray(json.contents) || json.contents.length === 0) {
        return send(400, googleError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified'));
      }
      const call = wantsFunctionCall(json);
      const parts = call ? [{ functionCall: options.functionCall }] : split(text, options.chunks ?? 4).map((t) => ({ text: t }));
      const base = { modelVersion: decodeURIComponent(model), responseId: `resp-${requests.length}` };
      if (method === 'generateContent') {
        const merged = call ? parts : [{ text }];
        return send(200, { candidates: [{ content: { role: 'model', parts: merged }, finishReason: 'STOP', index: 0 }], usageMetadata: usageMetadata(), ...base });
      }
      if (url.searchParams.get('alt') !== 'sse') return send(400, googleError(400, 'INVALID_ARGUMENT', 'this fake streams only with alt=sse'));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      parts.forEach((part, i) => {
        const last = i === parts.length - 1;
        const frame = {
          candidates: [{ content: { role: 'model', parts: [part] }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
          usageMetadata: last ? usageMetadata() : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
          ...base,
        };
        res.write(`data: ${JSON.stringify(frame)}\r\n\r\n`);
      });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (answer) => { queue.push(answer); },
    error: googleError,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
