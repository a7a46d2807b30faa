// A fake LLM upstream that speaks real HTTP/1.1 and SSE on 127.0.0.1, for end-to-end tests and the
// bench. Raw node:http on purpose: no framework in the way of byte-level faults (late headers, a
// stalled body, a reset socket, a malformed frame), and nothing between the socket and the
// precomputed bodies, so it stays fast enough to be the bench's upstream (~20k+ req/s on one core).
//
// Default answers follow the real vendors' wire formats (OpenAI Chat Completions, Responses,
// Embeddings; Anthropic Messages and count_tokens) on the real paths under /v1, echoing the
// request's `model`. Bodies are built once per distinct (kind, model, options) and reused.
//
//   const up = await startFakeUpstream({ chunks: 20 });
//   up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 1 }));   // next request: 429
//   ... point a host's baseUrl at `${up.url}/v1`, run the request ...
//   t.equal(up.requests[0].headers.authorization, 'Bearer sk-upstream');
//   await up.close();

import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createHash } from 'node:crypto';

// ---------------------------------------------------------------------------------------------
// Public types

export interface FakeUpstreamOptions {
  /** Port to listen on (always 127.0.0.1). Default 0: a free port. */
  port?: number;
  /** Number of text deltas in a default stream. Default 5. */
  chunks?: number;
  /** Full reply text; split into `chunks` deltas. Default: a short English sentence. */
  text?: string;
  /** Input token count reported in usage. Default 12. */
  inputTokens?: number;
  /** Output token count reported in usage. Default: `chunks`. */
  outputTokens?: number;
  /** Embedding vector length, unless the request asks for `dimensions`. Default 8. */
  embeddingDimensions?: number;
  /** Pause before the status line of default answers. Default 0. */
  headersDelayMs?: number;
  /** Pause between frames of default streams. Default 0 (all frames written at once). */
  chunkDelayMs?: number;
  /** When set, only these upstream keys are accepted (OpenAI: Bearer; Anthropic: x-api-key or
   * Bearer); any other credential gets the vendor's real 401 body. Default: accept anything. */
  apiKey?: string | string[];
  /** Keep received requests in `.requests`: true (default) keeps all, false none, N the last N. */
  record?: boolean | number;
  /** Default answers are this tool call instead of text (every shape). */
  toolCall?: ToolCallOptions;
}

export interface RecordedRequest {
  method: string;
  /** Path including the query string, as received. */
  path: string;
  /** Path without the query string. */
  pathname: string;
  query: URLSearchParams;
  /** Lower-cased header names (node's IncomingHttpHeaders). */
  headers: IncomingHttpHeaders;
  /** Header names with their case kept, as [name, value, name, value, ...]. */
  rawHeaders: string[];
  body: Buffer;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  json: any;
  receivedAt: number;
  /** Sequence number of the request on this fake (0-based, survives record limits). */
  index: number;
}

export type Then = 'end' | 'close' | 'reset' | 'stall';

/** A whole (non-streamed) answer. */
export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string | number | string[]>;
  /** An object is sent as JSON (content-type application/json unless given). */
  body?: string | Buffer | object;
  /** Pause before the status line. */
  headersDelayMs?: number;
  /** Pause between the headers and the body. */
  bodyDelayMs?: number;
  /** Send only the first N bytes of the body (content-length still announces the whole), then
   * apply `then`. */
  truncateAt?: number;
  /** After a truncated body: 'reset' (default, RST), 'close' (FIN), 'stall' (keep it open). */
  then?: Then;
}

/** An SSE frame: written as `event: <event>\ndata: <json>\n\n`. Strings are written verbatim. */
export interface SseFrame {
  event?: string;
  data: string | object;
  id?: string;
}

/** A streamed answer: each frame is one write. */
export interface ScriptedStream {
  status?: number;
  headers?: Record<string, string | number | string[]>;
  frames: Array<string | Buffer | SseFrame>;
  headersDelayMs?: number;
  /** Pause between the headers and the first frame. Default: `delayMs`. */
  firstFrameDelayMs?: number;
  /** Pause between frames. Default 0. */
  delayMs?: number;
  /** After the frames: 'end' (default: finish the chunked body), 'close' (FIN without the final
   * chunk), 'reset' (RST), 'stall' (keep the connection open and silent). */
  then?: Then;
}

/** Connection-level actions: RST without answering, accept and never answer, or the default. */
export interface ConnectionAction {
  kind: 'reset' | 'stall' | 'default';
  /** For 'reset'/'stall': pause before acting. */
  delayMs?: number;
}

/** Full control: write the answer yourself. */
export interface RawAction {
  kind: 'raw';
  handle(req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest): void;
}

export type ScriptedAction = ScriptedResponse | ScriptedStream | ConnectionAction | RawAction;

/** A per-request script: return an action, or undefined to fall through to the default. */
export type ScriptFn = (
  req: RecordedRequest,
) => ScriptedAction | undefined | Promise<ScriptedAction | undefined>;

export interface EnqueueOptions {
  /** Only requests whose pathname equals this (or matches the RegExp) take this entry. */
  path?: string | RegExp;
  /** Serve this entry to this many requests. Default 1. */
  times?: number;
}

export interface FakeUpstream {
  /** e.g. http://127.0.0.1:41234 (no trailing slash; the vendor APIs live under `${url}/v1`). */
  readonly url: string;
  readonly port: number;
  /** Every received request, oldest first (subject to the `record` option). */
  readonly requests: RecordedRequest[];
  /** Number of requests received since start or the last reset(). */
  readonly count: number;
  /** Requests answered by a scripted action (queued or script()) rather than the default answer. */
  readonly scripted: number;
  /** Header expectations that failed (see expectHeader). */
  readonly violations: string[];
  lastRequest(): RecordedRequest | undefined;
  /** Resolves once `n` requests in total have arrived (since the last reset). */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Queue a one-shot answer (or stream, or connection action). FIFO, first matching entry wins. */
  enqueue(action: ScriptedAction, opts?: EnqueueOptions): void;
  enqueueStream(stream: ScriptedStream, opts?: EnqueueOptions): void;
  /** Install (or, with undefined, remove) a script consulted after the queue, before the default. */
  script(fn: ScriptFn | undefined): void;
  /** Check every later request: `expected` a string (exact), a RegExp, or undefined (must be absent).
   * Failures go to `violations`; the request is still answered normally. */
  expectHeader(name: string, expected: string | RegExp | undefined): void;
  /** Change default-answer options at run time (drops precomputed bodies). */
  configure(options: Partial<FakeUpstreamOptions>): void;
  /** Forget requests, queue, script, expectations and violations; keep options. */
  reset(): void;
  /** Stop listening and destroy every open connection (stalled ones included). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Vendor body builders (exported so tests can build expected bodies or truncated streams)

export interface BodyOptions {
  model: string;
  text?: string;
  chunks?: number;
  inputTokens?: number;
  outputTokens?: number;
  /** Answer with one function/tool call instead of text (its JSON arguments streamed in `chunks`
   * pieces). For a custom tool such as apply_patch, `input` is a string. */
  toolCall?: ToolCallOptions;
}

export interface ToolCallOptions {
  name: string;
  /** Arguments object (JSON-encoded on the wire), or a raw string. */
  input: object | string;
  /** Call id; default derived from the name (call_... / toolu_01...). */
  id?: string;
}

const DEFAULT_TEXT = 'Hello! This reply comes from the fake upstream, one small piece at a time.';
const CREATED = 1767225600; // 2026-01-01T00:00:00Z: fixed so that bodies are reproducible

/** Stable pseudo-random id suffix derived from a seed (bodies are cached, so ids are per config). */
function idFrom(seed: string, len: number, alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
  const h = createHash('sha256').update(seed).digest();
  let s = '';
  for (let i = 0; i < len; i++) s += alphabet[h[i % h.length]! % alphabet.length];
  return s;
}
const hex = (seed: string, len: number) => idFrom(seed, len, '0123456789abcdef');

/** Split text into n non-empty pieces (word boundaries where possible; repeats text if short). */
export function splitText(text: string, n: number): string[] {
  n = Math.max(1, Math.floor(n));
  let src = text;
  while (src.length < n) src += ' ' + text;
  const words = src.match(/\S+\s*/g) ?? [src];
  if (words.length >= n) {
    const out: string[] = [];
    const per = words.length / n;
    for (let i = 0; i < n; i++) out.push(words.slice(Math.round(i * per), Math.round((i + 1) * per)).join(''));
    return out;
  }
  const out: string[] = [];
  const per = src.length / n;
  for (let i = 0; i < n; i++) out.push(src.slice(Math.round(i * per), Math.round((i + 1) * per)));
  return out;
}

function resolved(o: BodyOptions) {
  const chunks = Math.max(1, o.chunks ?? 5);
  const text = o.text ?? DEFAULT_TEXT;
  const pieces = splitText(text, chunks);
  let tool: { name: string; args: string; argPieces: string[]; callId: string; toolId: string } | undefined;
  if (o.toolCall) {
    const args = typeof o.toolCall.input === 'string' ? o.toolCall.input : JSON.stringify(o.toolCall.input);
    tool = {
      name: o.toolCall.name,
      args,
      argPieces: splitChars(args, chunks),
      callId: o.toolCall.id ?? 'call_' + idFrom('call' + o.toolCall.name + args, 24),
      toolId: o.toolCall.id ?? 'toolu_01' + idFrom('toolu' + o.toolCall.name + args, 22),
    };
  }
  return {
    model: o.model,
    pieces,
    text: pieces.join(''),
    input: o.inputTokens ?? 12,
    output: o.outputTokens ?? chunks,
    tool,
  };
}

/** Split a string into n pieces by characters (JSON arguments are streamed mid-token). */
function splitChars(s: string, n: number): string[] {
  n = Math.max(1, Math.min(n, s.length || 1));
  const out: string[] = [];
  const per = s.length / n;
  for (let i = 0; i < n; i++) out.push(s.slice(Math.round(i * per), Math.round((i + 1) * per)));
  return out;
}

/** SSE framing as the vendors write it. */
export function sseFrame(f: SseFrame): string {
  const data = typeof f.data === 'string' ? f.data : JSON.stringify(f.data);
  let s = '';
  if (f.id !== undefined) s += `id: ${f.id}\n`;
  if (f.event !== undefined) s += `event: ${f.event}\n`;
  return s + `data: ${data}\n\n`;
}

/** Real OpenAI pads stream chunks with an `obfuscation` string; deterministic here. */
function obfuscation(seed: string, deltaLen: number): string {
  return idFrom(seed, Math.max(1, 16 - (deltaLen % 16)));
}

export const openai = {
  chatCompletion(o: BodyOptions): object {
    const r = resolved(o);
    return {
      id: `chatcmpl-${idFrom('chat' + r.model + r.text, 29)}`,
      object: 'chat.completion',
      created: CREATED,
      model: r.model,
      choices: [
        {
          index: 0,
          message: r.tool
            ? {
                role: 'assistant',
                content: null,
                tool_calls: [{ id: r.tool.callId, type: 'function', function: { name: r.tool.name, arguments: r.tool.args } }],
                refusal: null,
                annotations: [],
              }
            : { role: 'assistant', content: r.text, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: r.tool ? 'tool_calls' : 'stop',
        },
      ],
      usage: {
        prompt_tokens: r.input,
        completion_tokens: r.output,
        total_tokens: r.input + r.output,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
      service_tier: 'default',
      system_fingerprint: 'fp_' + hex('fp' + r.model, 10),
    };
  },

  /** Chat Completions stream frames, `data: [DONE]` included. */
  chatChunks(o: BodyOptions & { includeUsage?: boolean; includeObfuscation?: boolean }): string[] {
    const r = resolved(o);
    const id = `chatcmpl-${idFrom('chatstream' + r.model + r.text, 29)}`;
    const fp = 'fp_' + hex('fp' + r.model, 10);
    const withUsage = o.includeUsage === true;
    const obf = o.includeObfuscation !== false;
    const chunk = (delta: object, finish: string | null, i: number, deltaLen: number) => {
      const c: Record<string, unknown> = {
        id,
        object: 'chat.completion.chunk',
        created: CREATED,
        model: r.model,
        service_tier: 'default',
        system_fingerprint: fp,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      };
      if (withUsage) c.usage = null;
      if (obf) c.obfuscation = obfuscation(id + i, deltaLen);
      return sseFrame({ data: c });
    };
    const frames: string[] = [];
    if (r.tool) {
      const tc = r.tool;
      frames.push(chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: tc.callId, type: 'function', function: { name: tc.name, arguments: '' } }],
        refusal: null,
      }, null, -1, 0));
      tc.argPieces.forEach((p, i) => frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }, null, i, p.length)));
      frames.push(chunk({}, 'tool_calls', tc.argPieces.length, 0));
    } else {
      frames.push(chunk({ role: 'assistant', content: '', refusal: null }, null, -1, 0));
      r.pieces.forEach((p, i) => frames.push(chunk({ content: p }, null, i, p.length)));
      frames.push(chunk({}, 'stop', r.pieces.length, 0));
    }
    if (withUsage) {
      const u: Record<string, unknown> = {
        id,
        object: 'chat.completion.chunk',
        created: CREATED,
        model: r.model,
        service_tier: 'default',
        system_fingerprint: fp,
        choices: [],
        usage: (openai.chatCompletion(o) as { usage: object }).usage,
      };
      if (obf) u.obfuscation = obfuscation(id + 'usage', 0);
      frames.push(sseFrame({ data: u }));
    }
    frames.push('data: [DONE]\n\n');
    return frames;
  },

  /** A Responses API `response` object (status completed unless given). */
  response(o: BodyOptions & { status?: 'completed' | 'in_progress' | 'failed'; error?: object | null }): Record<string, unknown> {
    const r = resolved(o);
    const status = o.status ?? 'completed';
    const done = status === 'completed';
    return {
      id: 'resp_' + hex('resp' + r.model + r.text, 50),
      object: 'response',
      created_at: CREATED,
      status,
      background: false,
      completed_at: done ? CREATED + 1 : null,
      error: o.error ?? null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      max_tool_calls: null,
      model: r.model,
      output: !done
        ? []
        : r.tool
          ? [
              {
                id: 'fc_' + hex('fc' + r.model + r.tool.callId, 50),
                type: 'function_call',
                status: 'completed',
                arguments: r.tool.args,
                call_id: r.tool.callId,
                name: r.tool.name,
              },
            ]
          : [
              {
                id: 'msg_' + hex('msg' + r.model + r.text, 50),
                type: 'message',
                status: 'completed',
                content: [{ type: 'output_text', annotations: [], logprobs: [], text: r.text }],
                role: 'assistant',
              },
            ],
      parallel_tool_calls: true,
      previous_response_id: null,
      prompt_cache_key: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: 'default',
      store: true,
      temperature: 1.0,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      tools: [],
      top_logprobs: 0,
      top_p: 1.0,
      truncation: 'disabled',
      // The real API also sends `"usage": null` before completion and `"user": null`; both are left
      // out because OpenAI's published schema (test/fixtures/openai-openapi/) does not allow null.
      ...(done
        ? {
            usage: {
              input_tokens: r.input,
              input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
              output_tokens: r.output,
              output_tokens_details: { reasoning_tokens: 0 },
              total_tokens: r.input + r.output,
            },
          }
        : {}),
      metadata: {},
    };
  },

  /** Responses stream frames (`event:` + `data:`), each event with its `sequence_number`. */
  responseEvents(o: BodyOptions & { includeObfuscation?: boolean }): string[] {
    const r = resolved(o);
    const full = openai.response(o);
    const msg = (full.output as Array<Record<string, unknown>>)[0]!;
    const itemId = msg.id as string;
    const pending = openai.response({ ...o, status: 'in_progress' });
    let seq = 0;
    const ev = (type: string, body: object) => sseFrame({ event: type, data: { type, ...body, sequence_number: seq++ } });
    if (r.tool) {
      const tc = r.tool;
      const frames = [
        ev('response.created', { response: pending }),
        ev('response.in_progress', { response: pending }),
        ev('response.output_item.added', {
          output_index: 0,
          item: { id: itemId, type: 'function_call', status: 'in_progress', arguments: '', call_id: tc.callId, name: tc.name },
        }),
      ];
      tc.argPieces.forEach((p, i) => {
        const d: Record<string, unknown> = { item_id: itemId, output_index: 0, delta: p };
        if (o.includeObfuscation !== false) d.obfuscation = obfuscation(itemId + i, p.length);
        frames.push(ev('response.function_call_arguments.delta', d));
      });
      frames.push(
        ev('response.function_call_arguments.done', { item_id: itemId, output_index: 0, name: tc.name, arguments: tc.args }),
        ev('response.output_item.done', { output_index: 0, item: msg }),
        ev('response.completed', { response: full }),
      );
      return frames;
    }
    const frames = [
      ev('response.created', { response: pending }),
      ev('response.in_progress', { response: pending }),
      ev('response.output_item.added', {
        output_index: 0,
        item: { id: itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
      }),
      ev('response.content_part.added', {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
      }),
    ];
    r.pieces.forEach((p, i) => {
      const d: Record<string, unknown> = { item_id: itemId, output_index: 0, content_index: 0, delta: p, logprobs: [] };
      if (o.includeObfuscation !== false) d.obfuscation = obfuscation(itemId + i, p.length);
      frames.push(ev('response.output_text.delta', d));
    });
    frames.push(
      ev('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text: r.text, logprobs: [] }),
      ev('response.content_part.done', {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', annotations: [], logprobs: [], text: r.text },
      }),
      ev('response.output_item.done', { output_index: 0, item: msg }),
      ev('response.completed', { response: full }),
    );
    return frames;
  },

  /**
   * A Responses answer whose model ran code in `containerId` first: a `code_interpreter_call`
   * (its `container_id`), or with `shell` the hosted shell's `shell_call` (its environment a
   * `container_reference`), then the text.
   */
  containerResponse(o: BodyOptions & { containerId: string; shell?: boolean }): Record<string, unknown> {
    const full = openai.response(o);
    return { ...full, id: 'resp_' + hex('resp' + o.containerId + (o.text ?? ''), 50), output: [openai.containerCall(o, 'completed'), ...(full.output as object[])] };
  },

  /** The call item of containerResponse, `in_progress` as response.output_item.added carries it. */
  containerCall(o: { containerId: string; shell?: boolean; text?: string }, status: 'in_progress' | 'completed'): Record<string, unknown> {
    const done = status === 'completed';
    if (o.shell) {
      return {
        id: 'sh_' + hex('sh' + o.containerId + (o.text ?? ''), 50),
        type: 'shell_call',
        call_id: 'call_' + idFrom('shcall' + o.containerId, 24),
        action: { commands: ['python3 -c "print(6 * 7)"'], max_output_length: null, timeout_ms: null },
        status,
        environment: { type: 'container_reference', container_id: o.containerId },
      };
    }
    return {
      id: 'ci_' + hex('ci' + o.containerId + (o.text ?? ''), 50),
      type: 'code_interpreter_call',
      status,
      code: done ? 'print(6 * 7)' : '',
      container_id: o.containerId,
      outputs: null,
    };
  },

  /** containerResponse streamed: the call's frames, then the text's, as OpenAI sends them. */
  containerEvents(o: BodyOptions & { containerId: string; shell?: boolean }): string[] {
    const r = resolved(o);
    const full = openai.containerResponse(o);
    const [call, msg] = full.output as Array<Record<string, unknown>>;
    const pending = { ...full, status: 'in_progress', completed_at: null, output: [] as object[] };
    delete (pending as Record<string, unknown>).usage;
    let seq = 0;
    const ev = (type: string, body: object) => sseFrame({ event: type, data: { type, ...body, sequence_number: seq++ } });
    const callId = call!.id as string;
    const itemId = msg!.id as string;
    const frames = [
      ev('response.created', { response: pending }),
      ev('response.in_progress', { response: pending }),
      ev('response.output_item.added', { output_index: 0, item: openai.containerCall(o, 'in_progress') }),
    ];
    if (!o.shell) {
      frames.push(
        ev('response.code_interpreter_call.in_progress', { output_index: 0, item_id: callId }),
        ev('response.code_interpreter_call_code.delta', { output_index: 0, item_id: callId, delta: 'print(6 * 7)' }),
        ev('response.code_interpreter_call_code.done', { output_index: 0, item_id: callId, code: 'print(6 * 7)' }),
        ev('response.code_interpreter_call.interpreting', { output_index: 0, item_id: callId }),
        ev('response.code_interpreter_call.completed', { output_index: 0, item_id: callId }),
      );
    }
    frames.push(
      ev('response.output_item.done', { output_index: 0, item: call }),
      ev('response.output_item.added', { output_index: 1, item: { id: itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' } }),
      ev('response.content_part.added', { item_id: itemId, output_index: 1, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } }),
    );
    for (const p of r.pieces) frames.push(ev('response.output_text.delta', { item_id: itemId, output_index: 1, content_index: 0, delta: p, logprobs: [] }));
    frames.push(
      ev('response.output_text.done', { item_id: itemId, output_index: 1, content_index: 0, text: r.text, logprobs: [] }),
      ev('response.content_part.done', { item_id: itemId, output_index: 1, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: r.text } }),
      ev('response.output_item.done', { output_index: 1, item: msg }),
      ev('response.completed', { response: full }),
    );
    return frames;
  },
  /** Embeddings list; `encoding: 'base64'` packs little-endian float32 as the real API does. */
  embeddings(o: { model: string; inputs?: number; dimensions?: number; encoding?: 'float' | 'base64'; inputTokens?: number }): object {
    const n = Math.max(1, o.inputs ?? 1);
    const dims = Math.max(1, o.dimensions ?? 8);
    const data = [];
    for (let i = 0; i < n; i++) {
      const vec: number[] = [];
      for (let d = 0; d < dims; d++) vec.push(Math.fround(Math.sin(i * 31 + d + 1) * 0.05));
      let embedding: number[] | string = vec;
      if (o.encoding === 'base64') {
        const buf = Buffer.alloc(dims * 4);
        vec.forEach((v, k) => buf.writeFloatLE(v, k * 4));
        embedding = buf.toString('base64');
      }
      data.push({ object: 'embedding', index: i, embedding });
    }
    const tokens = o.inputTokens ?? 5 * n;
    return { object: 'list', data, model: o.model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
  },

  /** `{"error":{message,type,param,code}}` as OpenAI sends it. */
  error(message: string, type: string, code: string | null = null, param: string | null = null): object {
    return { error: { message, type, param, code } };
  },
};

/** Anthropic tool_use input is always an object; a raw string becomes {input: string}. */
function toolInput(args: string): object {
  try {
    const v = JSON.parse(args);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v;
  } catch {
    /* not JSON */
  }
  return { input: args };
}

export const anthropic = {
  usage(input: number, output: number): object {
    return {
      input_tokens: input,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: output,
      service_tier: 'standard',
    };
  },

  message(o: BodyOptions): object {
    const r = resolved(o);
    return {
      id: 'msg_01' + idFrom('amsg' + r.model + r.text, 22),
      type: 'message',
      role: 'assistant',
      model: r.model,
      content: r.tool
        ? [{ type: 'tool_use', id: r.tool.toolId, name: r.tool.name, input: toolInput(r.tool.args) }]
        : [{ type: 'text', text: r.text }],
      stop_reason: r.tool ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: anthropic.usage(r.input, r.output),
    };
  },

  /** Messages stream: message_start, content_block_start, ping, deltas, stop, message_delta, message_stop. */
  events(o: BodyOptions): string[] {
    const r = resolved(o);
    const ev = (type: string, body: object) => sseFrame({ event: type, data: { type, ...body } });
    const frames = [
      ev('message_start', {
        message: {
          id: 'msg_01' + idFrom('amsgstream' + r.model + r.text, 22),
          type: 'message',
          role: 'assistant',
          model: r.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: anthropic.usage(r.input, 1),
        },
      }),
      r.tool
        ? ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: r.tool.toolId, name: r.tool.name, input: {} } })
        : ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      ev('ping', {}),
    ];
    if (r.tool) {
      frames.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } }));
      for (const p of r.tool.argPieces) frames.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: p } }));
    } else {
      for (const p of r.pieces) frames.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } }));
    }
    frames.push(
      ev('content_block_stop', { index: 0 }),
      ev('message_delta', {
        delta: { stop_reason: r.tool ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { input_tokens: r.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: r.output },
      }),
      ev('message_stop', {}),
    );
    return frames;
  },

  /**
   * A Messages answer whose model ran code (code_execution_20250825's bash) in `containerId`: a
   * server_tool_use, its bash_code_execution_tool_result (with `fileId`, a file the command wrote,
   * as Anthropic's Files API knows it), then the text; `container` says which container and when
   * it expires.
   */
  codeExecutionMessage(o: BodyOptions & { containerId: string; fileId?: string }): Record<string, unknown> {
    const r = resolved(o);
    const [use, result] = codeExecutionBlocks(o);
    return {
      id: 'msg_01' + idFrom('amsgcode' + o.containerId + r.text, 22),
      type: 'message',
      role: 'assistant',
      model: r.model,
      content: [use, result, { type: 'text', text: r.text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { ...anthropic.usage(r.input, r.output), server_tool_use: { web_search_requests: 0, code_execution_requests: 1 } },
      container: { id: o.containerId, expires_at: '2026-01-01T01:00:00.000000Z', skills: null },
    };
  },

  /** codeExecutionMessage streamed: the container comes in message_delta, as Anthropic sends it. */
  codeExecutionEvents(o: BodyOptions & { containerId: string; fileId?: string }): string[] {
    const r = resolved(o);
    const whole = anthropic.codeExecutionMessage(o);
    const [use, result] = codeExecutionBlocks(o);
    const ev = (type: string, body: object) => sseFrame({ event: type, data: { type, ...body } });
    const frames = [
      ev('message_start', { message: { ...whole, content: [], stop_reason: null, container: null, usage: anthropic.usage(r.input, 1) } }),
      ev('content_block_start', { index: 0, content_block: { ...use, input: {} } }),
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(use!.input) } }),
      ev('content_block_stop', { index: 0 }),
      ev('content_block_start', { index: 1, content_block: result }),
      ev('content_block_stop', { index: 1 }),
      ev('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
    ];
    for (const p of r.pieces) frames.push(ev('content_block_delta', { index: 2, delta: { type: 'text_delta', text: p } }));
    frames.push(
      ev('content_block_stop', { index: 2 }),
      ev('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null, container: whole.container },
        usage: { input_tokens: r.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: r.output, server_tool_use: { web_search_requests: 0, code_execution_requests: 1 } },
      }),
      ev('message_stop', {}),
    );
    return frames;
  },

  /** `{"type":"error","error":{type,message},"request_id"}` as Anthropic sends it. */
  error(type: string, message: string): object {
    return { type: 'error', error: { type, message }, request_id: 'req_011' + idFrom('areq' + type, 21) };
  },
};

/** The server_tool_use and bash_code_execution_tool_result blocks of anthropic.codeExecutionMessage. */
function codeExecutionBlocks(o: { containerId: string; fileId?: string }): [Record<string, unknown>, Record<string, unknown>] {
  const toolId = 'srvtoolu_01' + idFrom('srvtoolu' + o.containerId, 22);
  const command = o.fileId ? 'python3 -c "print(6 * 7)" > /tmp/outputs/answer.txt' : 'python3 -c "print(6 * 7)"';
  return [
    { type: 'server_tool_use', id: toolId, name: 'bash_code_execution', input: { command } },
    {
      type: 'bash_code_execution_tool_result',
      tool_use_id: toolId,
      content: {
        type: 'bash_code_execution_result',
        stdout: o.fileId ? '' : '42\n',
        stderr: '',
        return_code: 0,
        content: o.fileId ? [{ type: 'bash_code_execution_output', file_id: o.fileId }] : [],
      },
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Ready-made faults (each returns an action for enqueue / script)

type Vendor = 'openai' | 'anthropic';

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

export const faults = {
  /** 429 with the vendor's body; `retryAfter` seconds adds a `retry-after` header. */
  rateLimit(o: { vendor: Vendor; retryAfter?: number; model?: string } = { vendor: 'openai' }): ScriptedResponse {
    const headers: Record<string, string> = {};
    if (o.retryAfter !== undefined) headers['retry-after'] = String(o.retryAfter);
    const wait = o.retryAfter ?? 2;
    if (o.vendor === 'anthropic') {
      return {
        status: 429,
        headers: { ...headers, 'x-should-retry': 'true' },
        body: anthropic.error('rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.'),
      };
    }
    return {
      status: 429,
      headers: {
        ...headers,
        'x-ratelimit-limit-tokens': '30000',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': `${wait}s`,
      },
      body: openai.error(
        `Rate limit reached for ${o.model ?? 'gpt-4o-mini'} in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in ${wait}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        'tokens',
        'rate_limit_exceeded',
      ),
    };
  },

  /** 5xx with the vendor's body. Anthropic 529 is `overloaded_error`. */
  serverError(o: { vendor: Vendor; status?: number } = { vendor: 'openai' }): ScriptedResponse {
    const status = o.status ?? 500;
    if (o.vendor === 'anthropic') {
      const type = status === 529 ? 'overloaded_error' : 'api_error';
      return { status, headers: { 'x-should-retry': 'true' }, body: anthropic.error(type, status === 529 ? 'Overloaded' : 'Internal server error') };
    }
    return {
      status,
      body: openai.error(
        'The server had an error while processing your request. Sorry about that!',
        'server_error',
        null,
      ),
    };
  },

  /** 401 with the vendor's body for a bad upstream key. */
  unauthorized(o: { vendor: Vendor } = { vendor: 'openai' }): ScriptedResponse {
    if (o.vendor === 'anthropic') {
      return { status: 401, body: anthropic.error('authentication_error', 'invalid x-api-key') };
    }
    return {
      status: 401,
      body: openai.error(
        'Incorrect API key provided: sk-fake***********. You can find your API key at https://platform.openai.com/account/api-keys.',
        'invalid_request_error',
        'invalid_api_key',
      ),
    };
  },

  /** 200 application/json whose body is cut JSON. */
  malformedJson(): ScriptedResponse {
    return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"chatcmpl-broken","object":"chat.completion","choices":[{"ind' };
  },

  /** A chat stream whose second frame is not JSON. */
  malformedSse(o: { model?: string } = {}): ScriptedStream {
    const frames = openai.chatChunks({ model: o.model ?? 'gpt-4o-mini', chunks: 3 });
    return { headers: SSE_HEADERS, frames: [frames[0]!, 'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":"oops"\n\n', ...frames.slice(1)] };
  },

  /** Responses stream: response.created, response.in_progress, then response.failed (or an
   * `error` event with `as: 'error'`). The message text carries "try again in Ns" for rate limits. */
  responsesFailed(o: { model?: string; code?: string; message?: string; as?: 'failed' | 'error' } = {}): ScriptedStream {
    const model = o.model ?? 'gpt-4o-mini';
    const code = o.code ?? 'rate_limit_exceeded';
    const message = o.message ?? (code === 'rate_limit_exceeded'
      ? 'Rate limit reached for gpt-4o-mini in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 2s.'
      : 'The model failed to generate a response.');
    const opening = openai.responseEvents({ model }).slice(0, 2);
    let last: string;
    if (o.as === 'error') {
      last = sseFrame({ event: 'error', data: { type: 'error', code, message, param: null, sequence_number: 2 } });
    } else {
      const failed = openai.response({ model, status: 'failed', error: { code, message } });
      last = sseFrame({ event: 'response.failed', data: { type: 'response.failed', response: failed, sequence_number: 2 } });
    }
    return { headers: SSE_HEADERS, frames: [...opening, last] };
  },

  /** Anthropic stream: message_start, then `event: error` (overloaded_error by default). */
  anthropicStreamError(o: { model?: string; type?: string; message?: string } = {}): ScriptedStream {
    const start = anthropic.events({ model: o.model ?? 'claude-sonnet-4-5' })[0]!;
    const type = o.type ?? 'overloaded_error';
    return {
      headers: SSE_HEADERS,
      frames: [start, sseFrame({ event: 'error', data: { type: 'error', error: { type, message: o.message ?? 'Overloaded' } } })],
    };
  },

  /** The first `afterFrames` frames of a default stream, then `then` (default: socket reset). */
  cutStream(frames: string[], afterFrames: number, then: Then = 'reset', delayMs = 0): ScriptedStream {
    return { headers: SSE_HEADERS, frames: frames.slice(0, afterFrames), then, delayMs };
  },
};

// ---------------------------------------------------------------------------------------------
// A free port with nothing listening, for "connection refused".

/** Returns http://127.0.0.1:<port> where nothing listens (a port bound and released just now). */
export async function refusingUrl(): Promise<string> {
  const srv = http.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Parse an SSE body into frames: [{event?, data}] (data lines joined by \n). For test assertions. */
export function parseSse(text: string): Array<{ event?: string; data: string }> {
  const out: Array<{ event?: string; data: string }> = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trimStart();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    out.push(event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The server

type Kind = 'chat' | 'responses' | 'embeddings' | 'messages' | 'count_tokens' | 'models';

interface Prepared {
  status: number;
  /** Flat [name, value, ...]; the first pair is the per-request id slot. */
  headers: string[];
  body?: Buffer;
  frames?: Buffer[];
}

interface QueueEntry {
  action: ScriptedAction;
  path?: string | RegExp;
  left: number;
}

const ROUTES: Record<string, Kind> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/v1/embeddings': 'embeddings',
  '/v1/messages': 'messages',
  '/v1/messages/count_tokens': 'count_tokens',
  '/v1/models': 'models',
};

const MAX_CACHE = 512;

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  let opts: FakeUpstreamOptions = { ...options };
  let cache = new Map<string, Prepared>();
  let requests: RecordedRequest[] = [];
  let count = 0;
  let scriptedCount = 0;
  let queue: QueueEntry[] = [];
  let scriptFn: ScriptFn | undefined;
  let expectations: Array<{ name: string; expected: string | RegExp | undefined }> = [];
  let violations: string[] = [];
  let waiters: Array<{ n: number; resolve: (r: RecordedRequest[]) => void }> = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  let closed = false;
  let reqSeq = 0;

  const later = (ms: number | undefined, fn: () => void) => {
    if (!ms || ms <= 0) return fn();
    const t = setTimeout(() => {
      timers.delete(t);
      if (!closed) fn();
    }, ms);
    timers.add(t);
  };

  const keys = () => (opts.apiKey === undefined ? undefined : Array.isArray(opts.apiKey) ? opts.apiKey : [opts.apiKey]);

  // -- default answers ------------------------------------------------------------------------

  function vendorHeaders(kind: Kind, stream: boolean): string[] {
    const ct = stream ? 'text/event-stream; charset=utf-8' : 'application/json';
    if (kind === 'messages' || kind === 'count_tokens') {
      const h = ['content-type', ct, 'anthropic-organization-id', '00000000-0000-4000-8000-00000000fa4e'];
      if (stream) h.push('cache-control', 'no-cache');
      return h;
    }
    const h = [
      'content-type', ct,
      'openai-organization', 'org-fake',
      'openai-processing-ms', '42',
      'openai-project', 'proj_fake',
      'openai-version', '2020-10-01',
      'x-ratelimit-limit-requests', '10000',
      'x-ratelimit-remaining-requests', '9999',
      'x-ratelimit-reset-requests', '6ms',
    ];
    if (stream) h.push('cache-control', 'no-cache');
    return h;
  }

  function prepare(kind: Kind, j: any, stream: boolean): Prepared {
    const model = typeof j?.model === 'string' ? j.model : 'unknown-model';
    const base: BodyOptions = {
      model,
      text: opts.text,
      chunks: opts.chunks,
      inputTokens: opts.inputTokens,
      outputTokens: opts.outputTokens,
      toolCall: opts.toolCall,
    };
    // headers[0..1] is the request-id slot, filled per request.
    const json = (o: object, status = 200): Prepared => {
      const body = Buffer.from(JSON.stringify(o));
      return { status, headers: ['x-request-id', '', ...vendorHeaders(kind, false), 'content-length', String(body.length)], body };
    };
    const sse = (frames: string[]): Prepared => ({
      status: 200,
      headers: ['x-request-id', '', ...vendorHeaders(kind, true)],
      frames: frames.map((f) => Buffer.from(f)),
    });
    switch (kind) {
      case 'chat':
        return stream
          ? sse(openai.chatChunks({
              ...base,
              includeUsage: j?.stream_options?.include_usage === true,
              includeObfuscation: j?.stream_options?.include_obfuscation !== false,
            }))
          : json(openai.chatCompletion(base));
      case 'responses':
        return stream
          ? sse(openai.responseEvents({ ...base, includeObfuscation: j?.stream_options?.include_obfuscation !== false }))
          : json(openai.response(base));
      case 'embeddings': {
        const input = j?.input;
        const inputs = Array.isArray(input) && input.length > 0 && typeof input[0] !== 'number' ? input.length : 1;
        return json(openai.embeddings({
          model,
          inputs,
          dimensions: typeof j?.dimensions === 'number' ? j.dimensions : opts.embeddingDimensions,
          encoding: j?.encoding_format === 'base64' ? 'base64' : 'float',
        }));
      }
      case 'messages':
        return stream ? sse(anthropic.events(base)) : json(anthropic.message(base));
      case 'count_tokens':
        return json({ input_tokens: opts.inputTokens ?? 12 });
      case 'models':
        return json({
          object: 'list',
          data: ['gpt-4o-mini', 'gpt-4.1', 'text-embedding-3-small'].map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'system' })),
        });
    }
  }

  function cacheKey(kind: Kind, j: any, stream: boolean): string {
    const model = typeof j?.model === 'string' ? j.model : '';
    if (kind === 'chat') {
      return `chat|${model}|${stream}|${j?.stream_options?.include_usage === true}|${j?.stream_options?.include_obfuscation !== false}`;
    }
    if (kind === 'responses') return `responses|${model}|${stream}|${j?.stream_options?.include_obfuscation !== false}`;
    if (kind === 'embeddings') {
      const input = j?.input;
      const n = Array.isArray(input) && input.length > 0 && typeof input[0] !== 'number' ? input.length : 1;
      // Only a number is a dimension count: a fuzzed body may nest arrays deeper than String() recurses.
      const dimensions = typeof j?.dimensions === 'number' ? j.dimensions : '';
      return `emb|${model}|${n}|${dimensions}|${j?.encoding_format === 'base64'}`;
    }
    return `${kind}|${model}|${stream}`;
  }

  function vendorOf(pathname: string): Vendor {
    return pathname.startsWith('/v1/messages') ? 'anthropic' : 'openai';
  }

  function errorAnswer(vendor: Vendor, status: number, type: string, message: string): ScriptedResponse {
    return {
      status,
      body: vendor === 'anthropic' ? anthropic.error(type, message) : openai.error(message, type, null),
    };
  }

  function authorized(rec: RecordedRequest, vendor: Vendor): boolean {
    const allowed = keys();
    if (!allowed) return true;
    const auth = rec.headers.authorization;
    const bearer = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
    if (vendor === 'anthropic') {
      const x = rec.headers['x-api-key'];
      return (typeof x === 'string' && allowed.includes(x)) || (bearer !== undefined && allowed.includes(bearer));
    }
    return bearer !== undefined && allowed.includes(bearer);
  }

  function serveDefault(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    const kind = ROUTES[rec.pathname];
    const vendor = vendorOf(rec.pathname);
    if (!kind || (kind === 'models' ? req.method !== 'GET' : req.method !== 'POST')) {
      return serveScripted(res, errorAnswer(vendor, 404, 'not_found_error', `Not found: ${req.method} ${rec.pathname}`));
    }
    if (!authorized(rec, vendor)) return serveScripted(res, faults.unauthorized({ vendor }));
    const j = rec.json;
    if (kind !== 'models') {
      if (rec.body.length > 0 && j === undefined) {
        return serveScripted(res, errorAnswer(vendor, 400, 'invalid_request_error',
          vendor === 'anthropic' ? 'There was an error parsing the body of your request.' :
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"));
      }
      if (typeof j?.model !== 'string') {
        return serveScripted(res, errorAnswer(vendor, 400, 'invalid_request_error',
          vendor === 'anthropic' ? 'model: Field required' : "you must provide a model parameter"));
      }
    }
    const stream = (kind === 'chat' || kind === 'responses' || kind === 'messages') && j?.stream === true;
    const key = cacheKey(kind, j, stream);
    let p = cache.get(key);
    if (!p) {
      p = prepare(kind, j, stream);
      if (cache.size >= MAX_CACHE) cache.clear();
      cache.set(key, p);
    }
    const prepared = p;
    const idHeader = vendor === 'anthropic' ? 'request-id' : 'x-request-id';
    const reqId = (vendor === 'anthropic' ? 'req_011fake' : 'req_fake') + (reqSeq++).toString(36).padStart(8, '0');
    later(opts.headersDelayMs, () => {
      if (res.destroyed) return;
      // The header list is precomputed with a slot for the per-request id (see prepare()).
      const headers = prepared.headers.slice();
      headers[1] = reqId;
      if (idHeader !== headers[0]) headers[0] = idHeader;
      res.writeHead(prepared.status, headers);
      if (prepared.body) {
        res.end(prepared.body);
        return;
      }
      writeFrames(res, prepared.frames!, opts.chunkDelayMs ?? 0, opts.chunkDelayMs ?? 0, 'end');
    });
  }

  // -- scripted answers -----------------------------------------------------------------------

  function finish(res: ServerResponse, then: Then): void {
    if (res.destroyed) return;
    switch (then) {
      case 'end':
        res.end();
        return;
      case 'close':
        // FIN without the terminating chunk: the client sees a premature end of body.
        res.socket?.end();
        return;
      case 'reset':
        resetSocket(res.socket);
        return;
      case 'stall':
        return; // left open; close() destroys it
    }
  }

  function writeFrames(res: ServerResponse, frames: Array<string | Buffer>, firstDelay: number, delay: number, then: Then): void {
    if (delay <= 0 && firstDelay <= 0) {
      for (const f of frames) res.write(f);
      finish(res, then);
      return;
    }
    let i = 0;
    const step = () => {
      if (res.destroyed) return;
      if (i >= frames.length) return finish(res, then);
      res.write(frames[i++]!);
      later(delay, step);
    };
    later(firstDelay, step);
  }

  function normHeaders(h: Record<string, string | number | string[]> | undefined): Record<string, string | number | string[]> {
    const out: Record<string, string | number | string[]> = {};
    for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase()] = v;
    return out;
  }

  function serveScripted(res: ServerResponse, a: ScriptedResponse): void {
    const headers = normHeaders(a.headers);
    let body: Buffer;
    if (a.body === undefined) body = Buffer.alloc(0);
    else if (Buffer.isBuffer(a.body)) body = a.body;
    else if (typeof a.body === 'string') body = Buffer.from(a.body);
    else {
      body = Buffer.from(JSON.stringify(a.body));
      if (!('content-type' in headers)) headers['content-type'] = 'application/json';
    }
    if (!('content-length' in headers) && !('transfer-encoding' in headers)) headers['content-length'] = body.length;
    later(a.headersDelayMs, () => {
      if (res.destroyed) return;
      res.writeHead(a.status ?? 200, headers);
      if (a.truncateAt !== undefined) {
        res.flushHeaders();
        later(a.bodyDelayMs, () => {
          if (res.destroyed) return;
          // Write under the announced length; node would otherwise complain on end().
          if (a.truncateAt! > 0) res.socket?.write(body.subarray(0, a.truncateAt));
          finish(res, a.then ?? 'reset');
        });
        return;
      }
      if (a.bodyDelayMs) {
        res.flushHeaders();
        later(a.bodyDelayMs, () => {
          if (!res.destroyed) res.end(body);
        });
        return;
      }
      res.end(body);
    });
  }

  function serveStream(res: ServerResponse, s: ScriptedStream): void {
    const headers = normHeaders(s.headers);
    if (!('content-type' in headers)) headers['content-type'] = 'text/event-stream; charset=utf-8';
    if (!('cache-control' in headers)) headers['cache-control'] = 'no-cache';
    const frames = s.frames.map((f) => (typeof f === 'string' || Buffer.isBuffer(f) ? f : sseFrame(f)));
    later(s.headersDelayMs, () => {
      if (res.destroyed) return;
      res.writeHead(s.status ?? 200, headers);
      res.flushHeaders();
      writeFrames(res, frames, s.firstFrameDelayMs ?? s.delayMs ?? 0, s.delayMs ?? 0, s.then ?? 'end');
    });
  }

  function serveAction(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, a: ScriptedAction): void {
    if (!('kind' in a && a.kind === 'default')) scriptedCount++;
    if ('kind' in a && a.kind !== undefined) {
      switch (a.kind) {
        case 'default':
          return serveDefault(req, res, rec);
        case 'reset':
          return later(a.delayMs, () => resetSocket(req.socket));
        case 'stall':
          return; // never answered; close() destroys the socket
        case 'raw':
          return a.handle(req, res, rec);
      }
    }
    if ('frames' in a) return serveStream(res, a);
    return serveScripted(res, a as ScriptedResponse);
  }

  function takeQueued(rec: RecordedRequest): ScriptedAction | undefined {
    for (let i = 0; i < queue.length; i++) {
      const e = queue[i]!;
      if (e.path !== undefined && !(typeof e.path === 'string' ? e.path === rec.pathname : e.path.test(rec.pathname))) continue;
      if (--e.left <= 0) queue.splice(i, 1);
      return e.action;
    }
    return undefined;
  }

  // -- request intake -------------------------------------------------------------------------

  function check(rec: RecordedRequest): void {
    for (const { name, expected } of expectations) {
      const v = rec.headers[name.toLowerCase()];
      const got = Array.isArray(v) ? v.join(', ') : v;
      const ok = expected === undefined ? got === undefined
        : typeof expected === 'string' ? got === expected
        : got !== undefined && expected.test(got);
      if (!ok) violations.push(`${rec.method} ${rec.path}: header ${name} = ${JSON.stringify(got)}, expected ${expected === undefined ? 'absent' : String(expected)}`);
    }
  }

  // The bench sends one agent-sized body over and over, and parsing a 400 KB body took this
  // server 1.5 ms a request, more than the gateways under test spent on it: a big body byte-equal
  // to the last big one gets the value parsed then (the same object: read it, do not change it).
  let lastBig: { body: Buffer; json: any } | null = null;
  function parseRequestJson(body: Buffer): any {
    if (body.length === 0) return undefined;
    const big = body.length >= 64 * 1024;
    if (big && lastBig?.body.equals(body)) return lastBig.json;
    let json: any;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = undefined;
    }
    if (big) lastBig = { body, json };
    return json;
  }

  function handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const path = req.url ?? '/';
    const q = path.indexOf('?');
    const pathname = q === -1 ? path : path.slice(0, q);
    const json = parseRequestJson(body);
    let query: URLSearchParams | undefined;
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      pathname,
      get query() {
        return (query ??= new URLSearchParams(q === -1 ? '' : path.slice(q + 1)));
      },
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
      json,
      receivedAt: Date.now(),
      index: count,
    };
    count++;
    const rl = opts.record ?? true;
    if (rl !== false) {
      requests.push(rec);
      if (typeof rl === 'number' && requests.length > rl) requests.splice(0, requests.length - rl);
    }
    if (expectations.length) check(rec);
    if (waiters.length) {
      waiters = waiters.filter((w) => {
        if (count >= w.n) {
          w.resolve(requests.slice());
          return false;
        }
        return true;
      });
    }

    const queued = queue.length ? takeQueued(rec) : undefined;
    if (queued) return serveAction(req, res, rec, queued);
    if (scriptFn) {
      let out: ReturnType<ScriptFn>;
      try {
        out = scriptFn(rec);
      } catch (err) {
        return serveScripted(res, { status: 500, body: { error: { message: `fake-upstream script threw: ${String(err)}`, type: 'fake_script_error' } } });
      }
      if (out && typeof (out as Promise<unknown>).then === 'function') {
        (out as Promise<ScriptedAction | undefined>).then(
          (a) => (a ? serveAction(req, res, rec, a) : serveDefault(req, res, rec)),
          (err) => serveScripted(res, { status: 500, body: { error: { message: `fake-upstream script threw: ${String(err)}`, type: 'fake_script_error' } } }),
        );
        return;
      }
      if (out) return serveAction(req, res, rec, out as ScriptedAction);
    }
    serveDefault(req, res, rec);
  }

  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', () => {});
    res.on('error', () => {});
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;

  const api: FakeUpstream = {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return requests;
    },
    get scripted() {
      return scriptedCount;
    },
    get count() {
      return count;
    },
    get violations() {
      return violations;
    },
    lastRequest: () => requests[requests.length - 1],
    waitForRequests(n, timeoutMs = 5000) {
      if (count >= n) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const w = { n, resolve: (r: RecordedRequest[]) => { clearTimeout(t); resolve(r); } };
        const t = setTimeout(() => {
          waiters = waiters.filter((x) => x !== w);
          reject(new Error(`fake upstream: ${count} of ${n} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    enqueue(action, eo = {}) {
      queue.push({ action, path: eo.path, left: Math.max(1, eo.times ?? 1) });
    },
    enqueueStream(stream, eo = {}) {
      queue.push({ action: stream, path: eo.path, left: Math.max(1, eo.times ?? 1) });
    },
    script(fn) {
      scriptFn = fn;
    },
    expectHeader(name, expected) {
      expectations.push({ name, expected });
    },
    configure(o) {
      opts = { ...opts, ...o };
      cache = new Map();
    },
    reset() {
      requests = [];
      count = 0;
      queue = [];
      scriptFn = undefined;
      expectations = [];
      violations = [];
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await done;
    },
  };
  return api;
}

/** RST rather than FIN, so the peer sees ECONNRESET (node >= 16.17 has resetAndDestroy). */
function resetSocket(s: Socket | null | undefined): void {
  if (!s || s.destroyed) return;
  const r = (s as Socket & { resetAndDestroy?: () => void }).resetAndDestroy;
  if (typeof r === 'function') r.call(s);
  else s.destroy();
}
