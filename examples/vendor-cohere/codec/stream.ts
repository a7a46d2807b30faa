// Cohere v2 chat stream events -> canonical stream events. Cohere names every event in its
// JSON `type`: message-start opens the answer; content-start/-delta/-end carry text or
// thinking; tool-plan-delta the model's plan (reasoning); tool-call-start/-delta/-end one call
// with its arguments in pieces; message-end the finish reason and usage. A body that ends
// before message-end is an error. Custom-tool arguments are held until the call ends (their
// raw text is inside the JSON).
import { ERROR_CODES, type Route, type StreamDecoder } from 'relay-gateway';
import { customToolNames, emptyUsage, parseFrame, type CanonicalRequest, type StreamEvent } from 'relay-gateway/canonical';
import { stopReasonFromCohere } from './finish-reason.ts';
import { COHERE_ORIGIN, newResponseId } from './response.ts';
import { argumentsOf } from './tool-arguments.ts';
import { usageFromCohere } from './usage.ts';
import type { CohereStreamEvent } from './wire.ts';

export function cohereStreamDecoder(route: Route, request: CanonicalRequest): StreamDecoder {
  const custom = customToolNames(request);
  let started = false;
  let ended = false;
  let next = 0;
  let sawToolCall = false;
  // Cohere indexes content and tool calls separately; canonical parts are numbered together.
  const contentParts = new Map<number, number>();
  const callParts = new Map<number, { index: number; name: string; held: string }>();
  let plan: number | null = null;

  const start = (id?: string): StreamEvent[] => {
    if (started) return [];
    started = true;
    return [{ type: 'start', id: id ?? newResponseId(), model: route.upstreamModel }];
  };
  const closePlan = (): StreamEvent[] => {
    if (plan === null) return [];
    const event: StreamEvent = { type: 'part_end', index: plan };
    plan = null;
    return [event];
  };
  const failure = (message: string): StreamEvent[] => {
    ended = true;
    const def = ERROR_CODES.RELAY_ERR_UPSTREAM_BAD_RESPONSE;
    const open = [...contentParts.values(), ...[...callParts.values()].map((c) => c.index), ...(plan === null ? [] : [plan])];
    return [...open.map((index): StreamEvent => ({ type: 'part_end', index })), { type: 'error', error: { type: def.type, code: 'RELAY_ERR_UPSTREAM_BAD_RESPONSE', status: def.status, message } }];
  };

  return {
    decode(_event: string | undefined, data: string): StreamEvent[] {
      if (ended) return [];
      // A frame that is not JSON throws: the stream ends with an error, not an answer with a hole.
      const e = parseFrame<CohereStreamEvent>(data);
      if (e === null) return [];
      const out = start(e.type === 'message-start' ? e.id : undefined);
      const i = e.index ?? 0;
      const message = e.delta?.message;
      switch (e.type) {
        case 'tool-plan-delta':
          if (plan === null) {
            plan = next++;
            out.push({ type: 'part_start', index: plan, part: { type: 'reasoning', origin: COHERE_ORIGIN } });
          }
          if (message?.tool_plan) out.push({ type: 'delta', index: plan, delta: { type: 'reasoning', text: message.tool_plan } });
          break;
        case 'content-start': {
          out.push(...closePlan());
          const index = next++;
          contentParts.set(i, index);
          const thinking = message?.content?.type === 'thinking';
          out.push({ type: 'part_start', index, part: thinking ? { type: 'reasoning', origin: COHERE_ORIGIN } : { type: 'text' } });
          break;
        }
        case 'content-delta': {
          const index = contentParts.get(i);
          const c = message?.content;
          if (index === undefined || !c) break;
          if (typeof c.thinking === 'string' && c.thinking !== '') out.push({ type: 'delta', index, delta: { type: 'reasoning', text: c.thinking } });
          if (typeof c.text === 'string' && c.text !== '') out.push({ type: 'delta', index, delta: { type: 'text', text: c.text } });
          break;
        }
        case 'content-end': {
          const index = contentParts.get(i);
          if (index !== undefined) out.push({ type: 'part_end', index });
          contentParts.delete(i);
          break;
        }
        case 'tool-call-start': {
          out.push(...closePlan());
          sawToolCall = true;
          const call = message?.tool_calls;
          const name = call?.function?.name ?? '';
          const index = next++;
          const isCustom = custom.has(name);
          callParts.set(i, { index, name, held: '' });
          out.push({ type: 'part_start', index, part: { type: 'tool_call', id: call?.id ?? newResponseId(), name, tool_kind: isCustom ? 'custom' : 'function' } });
          const args = call?.function?.arguments ?? '';
          if (isCustom) callParts.get(i)!.held += args;
          else if (args !== '') out.push({ type: 'delta', index, delta: { type: 'arguments', text: args } });
          break;
        }
        case 'tool-call-delta': {
          const open = callParts.get(i);
          const args = message?.tool_calls?.function?.arguments ?? '';
          if (!open || args === '') break;
          if (custom.has(open.name)) open.held += args;
          else out.push({ type: 'delta', index: open.index, delta: { type: 'arguments', text: args } });
          break;
        }
        case 'tool-call-end': {
          const open = callParts.get(i);
          if (!open) break;
          if (custom.has(open.name)) {
            const text = argumentsOf(open.name, open.held, custom).arguments;
            if (text !== '') out.push({ type: 'delta', index: open.index, delta: { type: 'arguments', text } });
          }
          out.push({ type: 'part_end', index: open.index });
          callParts.delete(i);
          break;
        }
        case 'message-end': {
          if (e.delta?.error) return [...out, ...failure(e.delta.error)];
          ended = true;
          out.push(...closePlan());
          out.push({ type: 'end', stop_reason: stopReasonFromCohere(e.delta?.finish_reason, sawToolCall), usage: usageFromCohere(e.delta?.usage) ?? emptyUsage() });
          break;
        }
      }
      return out;
    },
    finish(): StreamEvent[] {
      if (ended) return [];
      return [...start(), ...failure('the upstream stream ended before message-end')];
    },
  };
}
