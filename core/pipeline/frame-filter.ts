// Hides or edits whole SSE frames in a byte stream and passes every other frame through as it
// came. Used only when a vendor adapter asked the upstream for something the client did not (usage
// on a streamed Chat Completion), so that the client still gets the answer it asked for.

/** The data the client gets for a frame: unchanged, changed, or null to hide the frame. */
export type FrameEdit = (event: string | undefined, data: string) => string | null;

const FRAME_END = /\r?\n\r?\n/g;
/** A frame end is at most 4 characters: this many of a held tail may begin one. */
const END_OVERLAP = 3;
/**
 * A frame longer than this is passed on unedited as it comes rather than held whole: the frames
 * worth editing (a usage chunk) are small, and an upstream that never ends its frame would
 * otherwise fill the process's memory.
 */
export const MAX_EDITED_FRAME_CHARS = 1024 * 1024;

export class SseFrameFilter {
  private pending = '';
  /** How much of `pending` was searched for a frame end. */
  private searched = 0;
  /** Inside a frame too long to edit: its text goes on as it comes. */
  private passing = false;
  private readonly decoder = new TextDecoder();

  constructor(private readonly edit: FrameEdit) {}

  /** The frames completed by this chunk, as the client gets them (possibly empty). */
  push(chunk: Buffer): string {
    this.pending += this.decoder.decode(chunk, { stream: true });
    let out = '';
    let start = 0;
    FRAME_END.lastIndex = Math.max(0, this.searched - END_OVERLAP);
    for (let m = FRAME_END.exec(this.pending); m; m = FRAME_END.exec(this.pending)) {
      const end = m.index + m[0].length;
      const frame = this.pending.slice(start, end);
      out += this.passing ? frame : this.edited(frame);
      this.passing = false;
      start = end;
    }
    this.pending = this.pending.slice(start);
    if (this.passing || this.pending.length > MAX_EDITED_FRAME_CHARS) {
      const held = Math.min(END_OVERLAP, this.pending.length);
      out += this.pending.slice(0, this.pending.length - held);
      this.pending = this.pending.slice(this.pending.length - held);
      this.passing = true;
    }
    this.searched = this.pending.length;
    return out;
  }

  /** What is left at the end of the stream (an unterminated last frame). */
  end(): string {
    const rest = this.pending + this.decoder.decode();
    this.pending = '';
    if (rest === '' || this.passing) return rest;
    return this.edited(rest);
  }

  private edited(frame: string): string {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line.startsWith('event:')) event = line.slice(6).trim();
    }
    if (data.length === 0) return frame;
    const original = data.join('\n');
    const kept = this.edit(event, original);
    if (kept === null) return '';
    if (kept === original) return frame;
    // Rewritten: the frame's other lines as they were, its data as one line.
    const other = frame.split(/\r?\n/).filter((line) => line !== '' && !line.startsWith('data:'));
    return `${[...other, `data: ${kept}`].join('\n')}\n\n`;
  }
}
