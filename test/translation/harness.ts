// Shared plumbing of the translation tests: the codecs by shape, stream drivers, output
// validation (OpenAI's OpenAPI description, the Anthropic SDK), and semantic projections
// that compare canonical values across shapes.
import type { CanonicalRequest, CanonicalResponse, StreamEvent, Usage } from '../../core/plugin-api/canonical.ts';
import type { EncodeContext, InboundCodec, RelayErrorBody, Route, StreamDecoder, StreamInspector } from '../../core/plugin-api.ts';
import * as canonical from '../../core/plugin-api/canonical.ts';
import { emptyUsage } from '../../core/plugin-api/canonical.ts';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import * as openai from '../../plugins/vendor-openai/codec/index.ts';
import * as anthropic from '../../plugins/vendor-anthropic/codec/index.ts';
import * as bedrock from '../../plugins/vendor-bedrock/codec/index.ts';
import { readConverseRequest } from '../support/converse-reader.ts';
import { chatCodec, responsesCodec } from '../../plugins/wire-vendor-a/codec/index.ts';
import { messagesCodec } from '../../plugins/wire-vendor-b/codec/index.ts';
import { canonicalCodec } from '../../plugins/wire-canonical/codec.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';
import { openapiProblems, responseStreamEventSchema } from '../support/openapi-schemas.ts';
import { sseFrames } from '../support/sse-frames.ts';
import { fakeRoute } from '../support/fake-route.ts';

export type InboundShape = 'openai.chat' | 'openai.responses' | 'anthropic.messages' | 'canonical';
export type UpstreamShape = 'openai.chat' | 'openai.responses' | 'anthropic.messages' | 'bedrock.converse';

export const INBOUND: Record<InboundShape, InboundCodec> = {
  'openai.chat': chatCodec,
  'openai.responses': responsesCodec,
  'anthropic.messages': messagesCodec,
  canonical: canonicalCodec,
};
export const INBOUND_SHAPES = Object.keys(INBOUND) as InboundShape[];
export const UPSTREAM_SHAPES: UpstreamShape[] = ['openai.chat', 'openai.responses', 'anthropic.messages', 'bedrock.converse'];

export interface VendorCodec {
  encodeRequest(shape: string, request: CanonicalRequest, route: Route): unknown;
  decodeResponse(shape: string, body: unknown, route: Route, request?: CanonicalRequest): CanonicalResponse;
  streamDecoder(shape: string, route: Route, request?: CanonicalRequest): StreamDecoder;
  decodeError(shape: string, status: number, body: string): RelayErrorBody;
  usageFromBody(shape: string, body: unknown): Usage | null;
  streamInspector(shape: string): StreamInspector;
}
export function vendorFor(shape: UpstreamShape): VendorCodec {
  if (shape === 'bedrock.converse') return bedrock;
  return shape === 'anthropic.messages' ? anthropic : openai;
}

/** An upstream request body read back into canonical: by the client shape's codec, or for Converse (no client shape) by the fake's reader. */
export function readBackRequest(shape: UpstreamShape, body: unknown, model?: string): CanonicalRequest {
  return shape === 'bedrock.converse' ? readConverseRequest(body, model) : INBOUND[shape].decodeRequest(body);
}

const checkEvent = TypeCompiler.Compile(canonical.StreamEvent);
const checkResponse = TypeCompiler.Compile(canonical.CanonicalResponse);
const checkRequest = TypeCompiler.Compile(canonical.CanonicalRequest);

export function canonicalProblems(kind: 'request' | 'response' | 'event', value: unknown): string[] {
  const check = kind === 'request' ? checkRequest : kind === 'response' ? checkResponse : checkEvent;
  return [...check.Errors(value)].slice(0, 3).map((e) => `${e.path} ${e.message}`);
}

/** Upstream SSE text -> canonical events through the vendor's stream decoder. */
export function decodeStream(shape: UpstreamShape, sse: string, route: Route = fakeRoute(), request?: CanonicalRequest, vendor: VendorCodec = vendorFor(shape)): StreamEvent[] {
  const decoder = vendor.streamDecoder(shape, route, request);
  const events: StreamEvent[] = [];
  for (const frame of sseFrames(sse)) events.push(...decoder.decode(frame.event, frame.data));
  events.push(...decoder.finish());
  return events;
}

/** Canonical events -> SSE text in an inbound shape. */
export function encodeStream(shape: InboundShape, ctx: EncodeContext, events: StreamEvent[]): string {
  const encoder = INBOUND[shape].streamEncoder(ctx);
  return events.map((e) => encoder.encode(e)).join('') + encoder.finish();
}

export function context(request: CanonicalRequest, inbound: unknown = {}, model = 'client-model'): EncodeContext {
  return { requestId: 'req_test1', model, request, inbound };
}

/** Canonical events -> the response they describe (parts assembled from their deltas). */
export function collect(events: StreamEvent[]): CanonicalResponse {
  const out: CanonicalResponse = { id: '', model: '', content: [], stop_reason: 'error', usage: emptyUsage() };
  const parts = new Map<number, Record<string, unknown>>();
  for (const e of events) {
    if (e.type === 'start') { out.id = e.id; out.model = e.model; }
    if (e.type === 'part_start') {
      const p = e.part;
      const part: Record<string, unknown> = p.type === 'text' ? { type: 'text', text: '' }
        : p.type === 'refusal' ? { type: 'refusal', text: '' }
        : p.type === 'tool_call' ? { type: 'tool_call', id: p.id, name: p.name, arguments: '', ...(p.tool_kind ? { tool_kind: p.tool_kind } : {}) }
        : p.type === 'web_search_call' ? { ...p }
        : { type: 'reasoning', ...(p.origin ? { origin: p.origin } : {}), ...(p.encrypted ? { encrypted: p.encrypted } : {}) };
      parts.set(e.index, part);
      out.content.push(part as never);
    }
    if (e.type === 'delta') {
      const part = parts.get(e.index)!;
      const d = e.delta;
      if (d.type === 'text' || d.type === 'refusal') part.text = `${part.text as string}${d.text}`;
      if (d.type === 'arguments') part.arguments = `${part.arguments as string}${d.text}`;
      if (d.type === 'reasoning') part.text = `${(part.text as string | undefined) ?? ''}${d.text}`;
      if (d.type === 'signature') part.signature = `${(part.signature as string | undefined) ?? ''}${d.signature}`;
      if (d.type === 'citation') part.citations = [...((part.citations as unknown[] | undefined) ?? []), d.citation];
    }
    if (e.type === 'end') { out.stop_reason = e.stop_reason; out.usage = e.usage; }
  }
  return out;
}

/** Problems of emitted non-streamed output in a shape (OpenAPI for OpenAI shapes). */
export function responseProblems(shape: InboundShape, body: unknown): string[] {
  if (shape === 'openai.chat') return openapiProblems('CreateChatCompletionResponse', body);
  if (shape === 'openai.responses') return openapiProblems('Response', body);
  if (shape === 'canonical') return canonicalProblems('response', body);
  const b = body as { type?: unknown; role?: unknown; content?: unknown; usage?: unknown };
  return b.type === 'message' && b.role === 'assistant' && Array.isArray(b.content) && typeof b.usage === 'object' ? [] : ['not an Anthropic message'];
}

/**
 * Validates an emitted stream in a shape: each OpenAI frame against its OpenAPI schema, the
 * Anthropic stream through the SDK's MessageStream (finalMessage must succeed unless the
 * stream reports an error), canonical frames against the TypeBox schema.
 */
export async function streamProblems(shape: InboundShape, sse: string): Promise<string[]> {
  const frames = sseFrames(sse);
  const problems: string[] = [];
  if (shape === 'openai.chat') {
    frames.forEach((f, i) => {
      if (f.data === '[DONE]') {
        if (i !== frames.length - 1) problems.push('[DONE] is not last');
        return;
      }
      const json = JSON.parse(f.data) as { error?: unknown };
      const schema = json.error === undefined ? 'CreateChatCompletionStreamResponse' : 'ErrorResponse';
      problems.push(...openapiProblems(schema, json).map((p) => `frame ${i}: ${p}`));
    });
  } else if (shape === 'openai.responses') {
    frames.forEach((f, i) => {
      const json = JSON.parse(f.data) as { type: string; sequence_number?: unknown };
      if (f.event !== json.type) problems.push(`frame ${i}: event ${f.event} != type ${json.type}`);
      if (json.sequence_number !== i) problems.push(`frame ${i}: sequence_number ${String(json.sequence_number)}`);
      problems.push(...openapiProblems(responseStreamEventSchema(json.type), json).map((p) => `frame ${i} ${json.type}: ${p}`));
    });
    const last = frames.at(-1);
    const lastType = last ? (JSON.parse(last.data) as { type: string }).type : 'none';
    // response.incomplete ends a stream cut short (max_output_tokens, a content filter), as OpenAI's do.
    if (!['response.completed', 'response.failed', 'response.incomplete'].includes(lastType)) problems.push(`last event is ${lastType}`);
    if (frames[0] && (JSON.parse(frames[0].data) as { type: string }).type !== 'response.created') problems.push('first event is not response.created');
  } else if (shape === 'anthropic.messages') {
    const failed = frames.some((f) => f.event === 'error');
    try {
      await sdkFinalMessage(sse);
      if (failed) problems.push('the SDK accepted a stream with an error event');
    } catch (err) {
      if (!failed) problems.push(`SDK: ${(err as Error).message}`);
    }
  } else {
    frames.forEach((f, i) => {
      const json = JSON.parse(f.data) as { type: string };
      if (f.event !== json.type) problems.push(`frame ${i}: event ${f.event} != type ${json.type}`);
      problems.push(...canonicalProblems('event', json).map((p) => `frame ${i}: ${p}`));
    });
  }
  return problems;
}

/** An emitted non-streamed response read back into canonical (as if that shape were an upstream). */
export function readBackResponse(shape: InboundShape, body: unknown, route: Route = fakeRoute()): CanonicalResponse {
  if (shape === 'canonical') return body as CanonicalResponse;
  return vendorFor(shape).decodeResponse(shape, body, route);
}

/** An emitted stream read back into canonical events (as if that shape were an upstream). */
export function readBackStream(shape: InboundShape, sse: string, route: Route = fakeRoute()): CanonicalResponse {
  if (shape === 'canonical') return collect(sseFrames(sse).map((f) => JSON.parse(f.data) as StreamEvent));
  return collect(decodeStream(shape, sse, route));
}

// ------------------------------------------------------------------ semantic projections

/** Tool arguments compared by meaning: JSON by value, {"input": raw} unwrapped to raw. */
export function normalizeArguments(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const keys = Object.keys(parsed);
      if (keys.length === 1 && keys[0] === 'input' && typeof (parsed as { input: unknown }).input === 'string') return (parsed as { input: string }).input;
      return JSON.stringify(sortKeys(parsed));
    }
  } catch {
    // raw text
  }
  return args;
}
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
}

export interface ResponseSemantics {
  text: string;
  refusal: string;
  reasoning: string;
  calls: string[];
  stop: string;
  usage: string;
}

export function responseSemantics(r: CanonicalResponse): ResponseSemantics {
  const texts = r.content.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
  return {
    text: texts.join(''),
    refusal: r.content.filter((p) => p.type === 'refusal').map((p) => (p as { text: string }).text).join(''),
    reasoning: r.content.filter((p) => p.type === 'reasoning').map((p) => (p as { text?: string }).text ?? '').join(''),
    calls: r.content.filter((p) => p.type === 'tool_call').map((p) => {
      const c = p as { id: string; name: string; arguments: string };
      return `${c.id}:${c.name}:${normalizeArguments(c.arguments)}`;
    }),
    stop: r.stop_reason,
    usage: `in=${r.usage.input_tokens} out=${r.usage.output_tokens} cached=${r.usage.cache_read_tokens} written=${r.usage.cache_write_tokens} reasoning=${r.usage.reasoning_tokens}`,
  };
}
