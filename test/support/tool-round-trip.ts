// A fake upstream script for tool-call round trips in any of its shapes (Chat Completions,
// Responses, Messages), streamed or not: while the request carries no tool result, the model
// asks for WEATHER_TOOL; once the client sends the result back, it answers FINAL_ANSWER.
import { anthropic, openai, type RecordedRequest, type ScriptFn, type ScriptedAction } from './fake-upstream.ts';

export const WEATHER_TOOL = { name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } };
export const WEATHER_RESULT = '18 degrees and sunny';
export const FINAL_ANSWER = 'It is 18 degrees and sunny in Paris.';
/** JSON Schema of the tool's parameters, as clients declare it. */
export const WEATHER_PARAMETERS = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city'],
};

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };

type Json = Record<string, any>;

/** True when the request (in the shape its path names) carries a tool result. */
export function carriesToolResult(req: RecordedRequest): boolean {
  const j = req.json as Json | undefined;
  if (req.pathname === '/v1/chat/completions') return Array.isArray(j?.messages) && j.messages.some((m: Json) => m?.role === 'tool');
  if (req.pathname === '/v1/responses') return Array.isArray(j?.input) && j.input.some((i: Json) => i?.type === 'function_call_output');
  return Array.isArray(j?.messages) && j.messages.some((m: Json) => Array.isArray(m?.content) && m.content.some((b: Json) => b?.type === 'tool_result'));
}

export interface RoundTripOptions {
  chunks?: number;
  /** Pause between stream frames. */
  delayMs?: number;
}

function answer(req: RecordedRequest, withTool: boolean, o: RoundTripOptions): ScriptedAction | undefined {
  const j = req.json as Json;
  const model = String(j?.model ?? 'model');
  const body = { model, chunks: o.chunks ?? 4, ...(withTool ? { toolCall: WEATHER_TOOL } : { text: FINAL_ANSWER }) };
  const stream = j?.stream === true;
  const sse = (frames: string[]): ScriptedAction => ({ headers: SSE_HEADERS, frames, delayMs: o.delayMs ?? 0 });
  switch (req.pathname) {
    case '/v1/chat/completions':
      return stream ? sse(openai.chatChunks({ ...body, includeUsage: j?.stream_options?.include_usage === true })) : { body: openai.chatCompletion(body) };
    case '/v1/responses':
      return stream ? sse(openai.responseEvents(body)) : { body: openai.response(body) };
    case '/v1/messages':
      return stream ? sse(anthropic.events(body)) : { body: anthropic.message(body) };
    default:
      return undefined;
  }
}

/** Turn 1: a WEATHER_TOOL call; turn 2 (the tool result is in the request): FINAL_ANSWER. */
export function toolRoundTripScript(o: RoundTripOptions = {}): ScriptFn {
  return (req) => answer(req, !carriesToolResult(req), o);
}

export interface ToolExchange {
  /** The id of the call as the assistant turn carries it. */
  callId: string | undefined;
  name: string | undefined;
  /** The call's arguments, parsed. */
  input: unknown;
  /** The id the tool result refers to. */
  resultFor: string | undefined;
  /** The tool result's text. */
  result: string | undefined;
}

function text(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: Json) => (typeof c === 'string' ? c : c?.text ?? '')).join('');
  return undefined;
}

function parsed(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** The tool call and tool result of a turn-2 request, read in the shape its path names. */
export function toolExchangeIn(req: RecordedRequest): ToolExchange {
  const j = req.json as Json;
  if (req.pathname === '/v1/chat/completions') {
    const call = j.messages.flatMap((m: Json) => (m.role === 'assistant' ? m.tool_calls ?? [] : []))[0];
    const result = j.messages.find((m: Json) => m.role === 'tool');
    return { callId: call?.id, name: call?.function?.name, input: parsed(call?.function?.arguments), resultFor: result?.tool_call_id, result: text(result?.content) };
  }
  if (req.pathname === '/v1/responses') {
    const items: Json[] = Array.isArray(j.input) ? j.input : [];
    const call = items.find((i) => i.type === 'function_call');
    const result = items.find((i) => i.type === 'function_call_output');
    return { callId: call?.call_id, name: call?.name, input: parsed(call?.arguments), resultFor: result?.call_id, result: text(result?.output) };
  }
  const blocks = (role: string): Json[] => j.messages.filter((m: Json) => m.role === role && Array.isArray(m.content)).flatMap((m: Json) => m.content);
  const call = blocks('assistant').find((b) => b.type === 'tool_use');
  const result = blocks('user').find((b) => b.type === 'tool_result');
  return { callId: call?.id, name: call?.name, input: call?.input, resultFor: result?.tool_use_id, result: text(result?.content) };
}
