// Splits SSE text into frames with the kernel's parser.
import { SseParser } from '../../core/plugin-api.ts';

export interface Frame { event: string | undefined; data: string }

export function sseFrames(text: string): Frame[] {
  const frames: Frame[] = [];
  const parser = new SseParser((event, data) => frames.push({ event, data }));
  parser.feed(text);
  parser.end();
  return frames;
}

/** Builds SSE text from frames (`event:` line only when given). */
export function sseText(frames: Array<{ event?: string; data: unknown }>): string {
  return frames.map((f) => `${f.event === undefined ? '' : `event: ${f.event}\n`}data: ${typeof f.data === 'string' ? f.data : JSON.stringify(f.data)}\n\n`).join('');
}

/** One SSE frame (`[event: ...\n]data: {...}\n\n`) with its JSON data edited; `[DONE]` and non-JSON frames as they are. */
export function editFrame(frame: string, edit: (data: Record<string, any>) => void): string {
  const match = /^([\s\S]*?)data: (.*)\n\n$/.exec(frame);
  if (!match || match[2] === '[DONE]') return frame;
  const data = JSON.parse(match[2]!) as Record<string, any>;
  edit(data);
  return `${match[1]}data: ${JSON.stringify(data)}\n\n`;
}
