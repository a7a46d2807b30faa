// A fake Cohere upstream over real HTTP/1.1 and SSE on 127.0.0.1, in Cohere's v2 wire format:
// POST /v2/chat, JSON, or with `stream: true` an SSE stream of named events (message-start,
// content-start/-delta/-end, tool-plan-delta, tool-call-start/-delta/-end, message-end).
//
//   const fake = await startFakeCohere({ apiKey: 'co-host', text: 'Hello there' });
//   ... host baseUrl `${fake.url}/v2` ...
//   fake.enqueue({ status: 429, body: { message: 'rate limited' } });
//
// A request whose last message is a tool result is answered with text; otherwise, when
// `toolCall` is set and the request declares tools, with a tool plan and that call. A tool
// message whose tool_call_id no earlier assistant call has is refused with 400, as Cohere does.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeCohereOptions {
  /** Accepted bearer keys; any other gets Cohere's 401. */
  apiKey?: string;
  text?: string;
  /** Text chunks of a streamed answer. Default 4. */
  chunks?: number;
  toolCall?: { name: string; arguments: Record<string, unknown> };
  usage?: { input: number; output: number; cached?: number };
}

export interface CohereRecordedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  json: any;
}

export interface FakeCohere {
  url: string;
  requests: CohereRecordedRequest[];
  enqueue(answer: { status: number; body: unknown }): void;
  close(): Promise<void>;
}

function split(text: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function requestProblem(json: any): string | null {
  if (typeof json?.model !== 'string') return 'model is required';
  if (!Array.isArray(json.messages) || json.messages.length === 0) return 'messages must not be empty';
  const calls = new Set<string>();
  for (const [i, m] of json.messages.entries()) {
    if (!['system', 'user', 'assistant', 'tool'].includes(m?.role)) return `messages[${i}].role is invalid`;
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) calls.add(c.id);
    if (m.role === 'tool' && !calls.has(m.tool_call_id)) return `messages[${i}]: tool_call_id ${String(m.tool_call_id)} answers no tool call`;
  }
  return null;
}

export async function startFakeCohere(options: FakeCohereOptions = {}): Promise<FakeCohere> {
  const text = options.text ?? 'Hello from the fake Cohere.';
  const usage = options.usage ?? { input: 9, output: 7 };
  const requests: CohereRecordedRequest[] = [];
  const queue: Array<{ status: number; body: unknown }> = [];
  let calls = 0;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method !== 'POST' || url.pathname !== '/v2/chat') return send(404, { message: `Not found: ${url.pathname}` });
      let json: any;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { message: 'invalid request: invalid JSON' });
      }
      requests.push({ path: url.pathname, headers: req.headers, json });
      if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) return send(401, { id: 'err-1', message: 'invalid api token' });
      const scripted = queue.shift();
      if (scripted) return send(scripted.status, scripted.body);
      const problem = requestProblem(json);
      if (problem) return send(400, { id: 'err-2', message: `invalid request: ${problem}` });

      const last = json.messages[json.messages.length - 1];
      const call = options.toolCall !== undefined && Array.isArray(json.tools) && json.tools.length > 0 && last.role !== 'tool';
      const id = `co-${requests.length}`;
      const callId = `${options.toolCall?.name ?? 'tool'}_${++calls}`;
      const u = { billed_units: { input_tokens: usage.input - 2, output_tokens: usage.output }, tokens: { input_tokens: usage.input, output_tokens: usage.output }, ...(usage.cached ? { cached_tokens: usage.cached } : {}) };
      const plan = `I will call ${options.toolCall?.name ?? ''}.`;
      const args = JSON.stringify(options.toolCall?.arguments ?? {});
      if (json.stream !== true) {
        const message = call
          ? { role: 'assistant', tool_plan: plan, tool_calls: [{ id: callId, type: 'function', function: { name: options.toolCall!.name, arguments: args } }] }
          : { role: 'assistant', content: [{ type: 'text', text }] };
        return send(200, { id, finish_reason: call ? 'TOOL_CALL' : 'COMPLETE', message, usage: u });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (data: Record<string, unknown>) => res.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
      ev({ type: 'message-start', id, delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } });
      if (call) {
        for (const piece of split(plan, 2)) ev({ type: 'tool-plan-delta', delta: { message: { tool_plan: piece } } });
        ev({ type: 'tool-call-start', index: 0, delta: { message: { tool_calls: { id: callId, type: 'function', function: { name: options.toolCall!.name, arguments: '' } } } } });
        for (const piece of split(args, 3)) ev({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } });
        ev({ type: 'tool-call-end', index: 0 });
      } else {
        ev({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } });
        for (const piece of split(text, options.chunks ?? 4)) ev({ type: 'content-delta', index: 0, delta: { message: { content: { text: piece } } } });
        ev({ type: 'content-end', index: 0 });
      }
      ev({ type: 'message-end', delta: { finish_reason: call ? 'TOOL_CALL' : 'COMPLETE', usage: u } });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (answer) => { queue.push(answer); },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
