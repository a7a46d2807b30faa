// Drops whole SSE frames from a byte stream and passes every other frame through as it came.
// Used only when a vendor adapter asked the upstream for something the client did not (usage
// on a streamed Chat Completion), so that the client still gets the answer it asked for.

export type FrameTest = (event: string | undefined, data: string) => boolean;

const FRAME_END = /\r?\n\r?\n/g;

export class SseFrameFilter {
  private pending = '';
  private readonly decoder = new TextDecoder();

  constructor(private readonly hide: FrameTest) {}

  /** The kept frames completed by this chunk (possibly empty). */
  push(chunk: Buffer): string {
    this.pending += this.decoder.decode(chunk, { stream: true });
    let out = '';
    let start = 0;
    FRAME_END.lastIndex = 0;
    for (let m = FRAME_END.exec(this.pending); m; m = FRAME_END.exec(this.pending)) {
      const end = m.index + m[0].length;
      const frame = this.pending.slice(start, end);
      if (!this.hidden(frame)) out += frame;
      start = end;
    }
    this.pending = this.pending.slice(start);
    return out;
  }

  /** What is left at the end of the stream (an unterminated last frame). */
  end(): string {
    const rest = this.pending + this.decoder.decode();
    this.pending = '';
    return rest && !this.hidden(rest) ? rest : '';
  }

  private hidden(frame: string): boolean {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line.startsWith('event:')) event = line.slice(6).trim();
    }
    return data.length > 0 && this.hide(event, data.join('\n'));
  }
}
