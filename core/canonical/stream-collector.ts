// Rebuilds the canonical response of a translated stream from its events, for what is kept
// after the answer (Responses state): text, refusals, reasoning and tool calls, in order.
import type { CanonicalResponse, ContentPart, StreamEvent } from './types.ts';

export class StreamCollector {
  private id = '';
  private model = '';
  private readonly parts = new Map<number, ContentPart>();
  private ended: CanonicalResponse | null = null;
  private failed = false;

  add(event: StreamEvent): void {
    switch (event.type) {
      case 'start':
        this.id = event.id;
        this.model = event.model;
        return;
      case 'part_start': {
        const p = event.part;
        if (p.type === 'tool_call') this.parts.set(event.index, { type: 'tool_call', id: p.id, name: p.name, arguments: '', ...(p.tool_kind ? { tool_kind: p.tool_kind } : {}) });
        else if (p.type === 'reasoning') {
          this.parts.set(event.index, { type: 'reasoning', ...(p.origin ? { origin: p.origin } : {}), ...(p.id ? { id: p.id } : {}), ...(p.encrypted ? { encrypted: p.encrypted } : {}) });
        } else if (p.type === 'web_search_call') this.parts.set(event.index, { ...p });
        else this.parts.set(event.index, { type: p.type, text: '' });
        return;
      }
      case 'delta': {
        const part = this.parts.get(event.index);
        if (!part) return;
        const d = event.delta;
        if ((d.type === 'text' && part.type === 'text') || (d.type === 'refusal' && part.type === 'refusal')) part.text += d.text;
        else if (d.type === 'arguments' && part.type === 'tool_call') part.arguments += d.text;
        else if (d.type === 'reasoning' && part.type === 'reasoning') part.text = (part.text ?? '') + d.text;
        else if (d.type === 'signature' && part.type === 'reasoning') part.signature = (part.signature ?? '') + d.signature;
        else if (d.type === 'citation' && part.type === 'text') (part.citations ??= []).push(d.citation);
        return;
      }
      case 'end': {
        const content = [...this.parts.entries()].sort((a, b) => a[0] - b[0]).map(([, part]) => part);
        this.ended = { id: this.id, model: this.model, content, stop_reason: event.stop_reason, usage: event.usage };
        if (event.stop_sequence !== undefined) this.ended.stop_sequence = event.stop_sequence;
        return;
      }
      case 'error':
        this.failed = true;
        return;
      default:
    }
  }

  /** The whole response once the stream ended without an error; null otherwise. */
  response(): CanonicalResponse | null {
    return this.failed ? null : this.ended;
  }
}
