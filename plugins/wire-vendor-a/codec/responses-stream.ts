// Canonical stream events -> OpenAI Responses stream events as SSE.
//
// Order: response.created, response.in_progress; per output item output_item.added ...
// output_item.done (messages also content_part.added/.done around output_text deltas;
// reasoning summary_part/summary_text events; function_call_arguments or
// custom_tool_call_input deltas); then response.completed (carrying the response id and
// usage), response.incomplete when the answer stopped early (max tokens, content filter: status
// `incomplete`, as the Responses API sends it), or response.failed. Every event has a
// sequence_number. Consecutive text and refusal parts share one message item. A web search opens
// whole: output_item.added, web_search_call.in_progress/.searching/.completed, output_item.done at
// once; a text part's citations go out as output_text.annotation.added when its text is done.
import { sseFrame, type EncodeContext, type StreamEncoder } from '../../../core/plugin-api.ts';
import { type StreamEvent, type Usage } from '../../../core/plugin-api/canonical.ts';
import { customToolNames, clientToolCall, unwrapCustomInput } from './custom-tool-calls.ts';
import { namespaceIndex } from './namespace-tools.ts';
import { SerializedObject } from './serialized-object.ts';
import { DeltaFrame } from './delta-frame.ts';
import {
  completion, itemId, messageItem, outputText, reasoningItem, refusalContent, responseId, responseObject, responsesUsage, toolCallItem,
} from './responses-object.ts';
import { urlAnnotations, webSearchItem } from './web-search-item.ts';
import type { Citation } from '../../../core/plugin-api/canonical.ts';

type PartState =
  | { kind: 'text' | 'refusal'; outputIndex: number; contentIndex: number; itemId: string; text: string; frame?: DeltaFrame; citations?: Citation[] }
  | { kind: 'reasoning'; outputIndex: number; itemId: string; text: string; summaryStarted: boolean; origin?: string; encrypted?: string; signature: string; frame?: DeltaFrame }
  | { kind: 'tool'; outputIndex: number; itemId: string; callId: string; name: string; clientName: string; toolKind?: 'function' | 'custom'; custom: boolean; buffered: boolean; args: string; frame?: DeltaFrame }
  | { kind: 'other' };

interface OpenMessage { outputIndex: number; itemId: string; content: Record<string, unknown>[] }

export function responsesStreamEncoder(ctx: EncodeContext): StreamEncoder {
  const custom = customToolNames(ctx.request);
  const namespaces = namespaceIndex(ctx.inbound);
  const createdAt = Math.floor(Date.now() / 1000);
  const id = responseId(ctx.requestId);
  let sequence = 0;
  let created = false;
  let terminated = false;
  let message: OpenMessage | null = null;
  const output: Record<string, unknown>[] = [];
  const parts = new Map<number, PartState>();

  const emit = (type: string, fields: Record<string, unknown>): string =>
    sseFrame(type, JSON.stringify({ type, ...fields, sequence_number: sequence++ }));
  /** The same frame as emit(type, { response }), around a response already serialized. */
  const emitResponse = (type: string, responseJson: string): string =>
    sseFrame(type, `{"type":"${type}","response":${responseJson},"sequence_number":${sequence++}}`);

  // The response as created; the closing frame re-serializes only what changed (see SerializedObject).
  let response: SerializedObject | null = null;
  const ensureCreated = (): string => {
    if (created) return '';
    created = true;
    response = new SerializedObject(responseObject(ctx, id, createdAt, 'in_progress'));
    const json = response.with();
    return emitResponse('response.created', json) + emitResponse('response.in_progress', json);
  };

  const closeMessage = (): string => {
    if (!message) return '';
    const { outputIndex } = message;
    const item = messageItem(message.itemId, message.content, 'completed');
    output[outputIndex] = item;
    message = null;
    return emit('response.output_item.done', { output_index: outputIndex, item });
  };

  const openItem = (item: Record<string, unknown>): string => {
    output.push(item);
    return emit('response.output_item.added', { output_index: output.length - 1, item });
  };

  const startPart = (index: number, part: Extract<StreamEvent, { type: 'part_start' }>['part']): string => {
    let out = ensureCreated();
    if (part.type === 'text' || part.type === 'refusal') {
      if (!message) {
        const outputIndex = output.length;
        message = { outputIndex, itemId: itemId('msg', id, outputIndex), content: [] };
        out += openItem(messageItem(message.itemId, [], 'in_progress'));
      }
      const state: PartState = { kind: part.type, outputIndex: message.outputIndex, contentIndex: message.content.length, itemId: message.itemId, text: '' };
      parts.set(index, state);
      return out + emit('response.content_part.added', {
        item_id: state.itemId, output_index: state.outputIndex, content_index: state.contentIndex,
        part: part.type === 'text' ? outputText('') : refusalContent(''),
      });
    }
    out += closeMessage();
    const outputIndex = output.length;
    if (part.type === 'reasoning') {
      const state: PartState = { kind: 'reasoning', outputIndex, itemId: itemId('rs', id, outputIndex), text: '', summaryStarted: false, origin: part.origin, encrypted: part.encrypted, signature: '' };
      parts.set(index, state);
      return out + openItem(reasoningItem(state.itemId, { origin: part.origin, encrypted: part.encrypted }, false));
    }
    if (part.type === 'tool_call') {
      const kind = clientToolCall({ name: part.name, arguments: '', tool_kind: part.tool_kind }, custom);
      const item = toolCallItem(id, outputIndex, { callId: part.id, name: part.name, arguments: '', toolKind: part.tool_kind }, custom, namespaces, 'in_progress');
      parts.set(index, {
        kind: 'tool', outputIndex, itemId: item.id as string, callId: part.id, name: part.name, clientName: item.name as string, toolKind: part.tool_kind,
        custom: kind.kind === 'custom', buffered: kind.kind === 'custom' && part.tool_kind !== 'custom', args: '',
      });
      return out + openItem(item);
    }
    if (part.type === 'web_search_call') {
      parts.set(index, { kind: 'other' });
      return out + webSearch(part, outputIndex);
    }
    parts.set(index, { kind: 'other' });
    return out;
  };

  /** A whole search: its item opens, runs through OpenAI's progress events, and closes. */
  const webSearch = (part: Parameters<typeof webSearchItem>[0], outputIndex: number): string => {
    const done = webSearchItem(part);
    const at = { output_index: outputIndex, item_id: done.id };
    let out = openItem(webSearchItem(part, 'in_progress'));
    out += emit('response.web_search_call.in_progress', at);
    out += emit('response.web_search_call.searching', at);
    if (done.status === 'completed') out += emit('response.web_search_call.completed', at);
    output[outputIndex] = done;
    return out + emit('response.output_item.done', { output_index: outputIndex, item: done });
  };

  const delta = (index: number, d: Extract<StreamEvent, { type: 'delta' }>['delta']): string => {
    const state = parts.get(index);
    if (!state || state.kind === 'other') return '';
    if (state.kind === 'text' && d.type === 'citation') {
      (state.citations ??= []).push(d.citation);
      return '';
    }
    if ((state.kind === 'text' && d.type === 'text') || (state.kind === 'refusal' && d.type === 'refusal')) {
      state.text += d.text;
      state.frame ??= new DeltaFrame(
        state.kind === 'text' ? 'response.output_text.delta' : 'response.refusal.delta',
        { item_id: state.itemId, output_index: state.outputIndex, content_index: state.contentIndex },
        state.kind === 'text' ? { logprobs: [] } : {},
      );
      return state.frame.render(d.text, sequence++);
    }
    if (state.kind === 'reasoning' && d.type === 'reasoning') {
      state.text += d.text;
      let out = '';
      if (!state.summaryStarted) {
        state.summaryStarted = true;
        out += emit('response.reasoning_summary_part.added', { item_id: state.itemId, output_index: state.outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } });
      }
      state.frame ??= new DeltaFrame('response.reasoning_summary_text.delta', { item_id: state.itemId, output_index: state.outputIndex, summary_index: 0 });
      return out + state.frame.render(d.text, sequence++);
    }
    if (state.kind === 'reasoning' && d.type === 'signature') {
      state.signature += d.signature;
      return '';
    }
    if (state.kind === 'tool' && d.type === 'arguments') {
      state.args += d.text;
      if (state.buffered) return '';
      state.frame ??= new DeltaFrame(
        state.custom ? 'response.custom_tool_call_input.delta' : 'response.function_call_arguments.delta',
        { item_id: state.itemId, output_index: state.outputIndex },
      );
      return state.frame.render(d.text, sequence++);
    }
    return '';
  };

  const endPart = (index: number): string => {
    const state = parts.get(index);
    parts.delete(index);
    if (!state || state.kind === 'other') return '';
    if (state.kind === 'text' || state.kind === 'refusal') {
      const annotations = state.kind === 'text' ? urlAnnotations(state.text, state.citations) : [];
      const content = state.kind === 'text' ? outputText(state.text, annotations) : refusalContent(state.text);
      const at = { item_id: state.itemId, output_index: state.outputIndex, content_index: state.contentIndex };
      // Anthropic's citations arrive before the text they cite: all are announced once the text is whole.
      const added = annotations.map((annotation, i) => emit('response.output_text.annotation.added', Object.assign({}, at, { annotation_index: i, annotation }))).join('');
      const done = added + (state.kind === 'text'
        ? emit('response.output_text.done', Object.assign({}, at, { text: state.text, logprobs: [] }))
        : emit('response.refusal.done', Object.assign({}, at, { refusal: state.text })));
      if (message && message.itemId === state.itemId) message.content[state.contentIndex] = content;
      return done + emit('response.content_part.done', Object.assign({}, at, { part: content }));
    }
    if (state.kind === 'reasoning') {
      let out = '';
      if (state.summaryStarted) {
        const at = { item_id: state.itemId, output_index: state.outputIndex, summary_index: 0 };
        out += emit('response.reasoning_summary_text.done', Object.assign({}, at, { text: state.text }));
        out += emit('response.reasoning_summary_part.done', Object.assign({}, at, { part: { type: 'summary_text', text: state.text } }));
      }
      // OpenAI's encrypted content can arrive only when the item closes: it is carried as a signature delta.
      const late = state.signature === '' ? undefined : state.signature;
      const fields = state.origin === 'openai' && state.encrypted === undefined
        ? { text: state.text, origin: state.origin, encrypted: late }
        : { text: state.text, origin: state.origin, encrypted: state.encrypted, signature: late };
      const item = reasoningItem(state.itemId, fields, true);
      output[state.outputIndex] = item;
      return out + emit('response.output_item.done', { output_index: state.outputIndex, item });
    }
    if (state.kind !== 'tool') return '';
    let out = '';
    const args = state.buffered ? unwrapCustomInput(state.args) : state.args;
    if (state.buffered && args !== '') out += emit('response.custom_tool_call_input.delta', { item_id: state.itemId, output_index: state.outputIndex, delta: args });
    const at = { item_id: state.itemId, output_index: state.outputIndex };
    out += state.custom
      ? emit('response.custom_tool_call_input.done', Object.assign({}, at, { input: args }))
      : emit('response.function_call_arguments.done', Object.assign({}, at, { name: state.clientName, arguments: args }));
    const item = toolCallItem(id, state.outputIndex, { callId: state.callId, name: state.name, arguments: state.args, toolKind: state.toolKind }, custom, namespaces, 'completed');
    output[state.outputIndex] = item;
    return out + emit('response.output_item.done', { output_index: state.outputIndex, item });
  };

  const closeAll = (): string => {
    let out = '';
    for (const index of [...parts.keys()]) out += endPart(index);
    return out + closeMessage();
  };

  const complete = (stopReason: Parameters<typeof completion>[0], usage: Usage): string => {
    terminated = true;
    const { status, incomplete_details } = completion(stopReason);
    const json = response!.with({
      status: status === 'failed' ? 'completed' : status,
      ...(status === 'incomplete' ? {} : { completed_at: Math.floor(Date.now() / 1000) }),
      incomplete_details,
      output,
      usage: responsesUsage(usage),
    });
    return emitResponse(status === 'incomplete' ? 'response.incomplete' : 'response.completed', json);
  };

  const fail = (type: string, message: string): string => {
    terminated = true;
    const json = response!.with({
      status: 'failed',
      error: { code: type === 'rate_limit' ? 'rate_limit_exceeded' : 'server_error', message },
      output,
    });
    return emitResponse('response.failed', json);
  };

  return {
    contentType: 'text/event-stream; charset=utf-8',
    encode(event: StreamEvent): string {
      if (terminated) return '';
      switch (event.type) {
        case 'start':
          return ensureCreated();
        case 'part_start':
          return startPart(event.index, event.part);
        case 'delta':
          return ensureCreated() + delta(event.index, event.delta);
        case 'part_end':
          return endPart(event.index);
        case 'end':
          return ensureCreated() + closeAll() + complete(event.stop_reason, event.usage);
        case 'error':
          return ensureCreated() + closeAll() + fail(event.error.type, event.error.message);
      }
    },
    finish(): string {
      if (terminated) return '';
      return ensureCreated() + closeAll() + fail('upstream', 'the upstream stream ended before the response completed');
    },
  };
}
