// Server-sent events: framing out, incremental parsing in (eventsource-parser does the
// spec's line handling: CR/LF variants, multi-line data, comments, retry fields).
import { createParser, type EventSourceParser } from 'eventsource-parser';

/** One SSE frame. `event` is left out when undefined. */
export function sseFrame(event: string | undefined, data: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

/** Feeds bytes, calls `onEvent` once per complete frame. UTF-8 split across chunks is handled. */
export class SseParser {
  private readonly parser: EventSourceParser;
  private readonly decoder = new TextDecoder();

  constructor(onEvent: (event: string | undefined, data: string) => void) {
    this.parser = createParser({ onEvent: (e) => onEvent(e.event, e.data) });
  }

  feed(chunk: Buffer | Uint8Array | string): void {
    this.parser.feed(typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true }));
  }

  /** Flushes a final frame that the upstream did not terminate with a blank line. */
  end(): void {
    const rest = this.decoder.decode();
    if (rest) this.parser.feed(rest);
    this.parser.feed('\n\n');
  }
}
