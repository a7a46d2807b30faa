// The SSE frame of one part's deltas (output_text, refusal, reasoning summary, tool arguments),
// laid out once per part: each delta then serializes only its text. Byte for byte what
// sseFrame(type, JSON.stringify({ type, ...fields, delta, ...after, sequence_number })) gives;
// deltas are most of a stream's frames (test/bench/RESULTS.md, the Responses encoder).

export class DeltaFrame {
  private readonly head: string;
  private readonly tail: string;

  constructor(type: string, fields: Record<string, unknown>, after: Record<string, unknown> = {}) {
    this.head = `event: ${type}\ndata: {"type":${JSON.stringify(type)},${members(fields, ',')}"delta":`;
    this.tail = `${members(after, ',', true)},"sequence_number":`;
  }

  render(delta: string, sequence: number): string {
    return `${this.head}${JSON.stringify(delta)}${this.tail}${sequence}}\n\n`;
  }
}

/** An object's members as JSON text without the braces, with `separator` after (or before) them. */
function members(object: Record<string, unknown>, separator: string, before = false): string {
  const json = JSON.stringify(object);
  if (json === '{}') return '';
  const inner = json.slice(1, -1);
  return before ? separator + inner : inner + separator;
}
