// A count Relay makes of a request's input tokens, for a stream that must name one before the
// upstream does (Anthropic's message_start). It is an estimate: UTF-8 bytes of every text the
// model reads (system, messages, tool calls and results, tool definitions) divided by 4, plus
// IMAGE_TOKENS per image. Reasoning from earlier turns is not counted (vendors drop it from the
// context). The upstream's own count replaces it as soon as the upstream reports one.
import type { CanonicalRequest, ContentPart } from './types.ts';

/** Bytes of text per token: the usual rule of thumb for English and code with BPE tokenizers. */
export const BYTES_PER_TOKEN = 4;
/** What one image counts: about Anthropic's cost of an image of ~1.15 megapixels (its largest unscaled size). */
export const IMAGE_TOKENS = 1_600;

function partBytes(part: ContentPart): { bytes: number; images: number } {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return { bytes: Buffer.byteLength(part.text), images: 0 };
    case 'image':
      return { bytes: 0, images: 1 };
    case 'tool_call':
      return { bytes: Buffer.byteLength(part.name) + Buffer.byteLength(part.arguments), images: 0 };
    case 'tool_result': {
      let bytes = 0;
      let images = 0;
      for (const inner of part.content) {
        const counted = partBytes(inner);
        bytes += counted.bytes;
        images += counted.images;
      }
      return { bytes, images };
    }
    case 'web_search_call':
      // What the vendor replays (its results, encrypted or not) is what the model reads again.
      return { bytes: Buffer.byteLength(JSON.stringify(part.raw ?? part.sources ?? []) ?? ''), images: 0 };
    default:
      return { bytes: 0, images: 0 };
  }
}

/** The estimated input tokens of `request` (at least 1). */
export function estimateInputTokens(request: CanonicalRequest): number {
  let bytes = 0;
  let images = 0;
  for (const part of request.system ?? []) bytes += Buffer.byteLength(part.text);
  for (const message of request.messages) {
    for (const part of message.content) {
      const counted = partBytes(part);
      bytes += counted.bytes;
      images += counted.images;
    }
  }
  for (const tool of request.tools ?? []) {
    if (tool.type === 'web_search') continue;
    bytes += Buffer.byteLength(tool.name) + Buffer.byteLength(tool.description ?? '');
    if (tool.type === 'function' && tool.parameters) bytes += Buffer.byteLength(JSON.stringify(tool.parameters));
    if (tool.type === 'custom' && tool.format?.type === 'grammar') bytes += Buffer.byteLength(tool.format.definition);
  }
  return Math.max(1, Math.ceil(bytes / BYTES_PER_TOKEN) + images * IMAGE_TOKENS);
}
