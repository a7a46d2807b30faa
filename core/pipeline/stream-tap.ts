// The passthrough tap on a stream: what the vendor's StreamInspector learns from the bytes while
// they pass unchanged to the client.
import { SseParser } from '../http/sse.ts';
import type { StreamInspector, StreamSeen } from '../hooks.ts';
import type { Usage } from '../canonical/types.ts';
import { OutputFrames } from './output-frames.ts';

export type Seen = StreamSeen;

export class StreamTap {
  /** What the frames so far showed: output or an error, once either came. */
  seen: Seen = 'opening';
  /** Frames read so far, ping events left out (stream-idle.ts tells keep-alives from events by it). */
  frames = 0;
  /** The output frames' lengths, for an answer whose usage never comes (output-frames.ts). */
  readonly output = new OutputFrames();
  private readonly parser: SseParser;

  /** `onFrame` sees each frame too (forwarded-capture.ts), so a stream is parsed once. */
  constructor(private readonly inspector: StreamInspector, onOversize: (limit: number) => void, onFrame?: (event: string | undefined, data: string) => void) {
    this.parser = new SseParser((event, data) => {
      if (event !== 'ping') this.frames++;
      const kind = inspector.inspect(event, data);
      if (this.seen === 'opening' || kind === 'error') this.seen = kind === 'opening' ? this.seen : kind;
      if (kind === 'output') this.output.add(event, data);
      onFrame?.(event, data);
    }, { onOversize });
  }

  /** A frame has begun and not ended (SseParser.midFrame). */
  get midFrame(): boolean {
    return this.parser.midFrame;
  }

  /** A chunk read while the opening is held; returns what the frames so far showed. */
  hold(chunk: Buffer): Seen {
    this.parser.feed(chunk);
    return this.seen;
  }

  /** A chunk on its way to the client, after the hold. */
  pass(chunk: Buffer): void {
    this.parser.feed(chunk);
  }

  /** The stream is over (or was cut): its usage, and whether an in-stream error came. */
  finish(): { usage: Usage | null; error: boolean } {
    this.parser.end();
    return { usage: this.inspector.usage(), error: this.seen === 'error' };
  }
}
