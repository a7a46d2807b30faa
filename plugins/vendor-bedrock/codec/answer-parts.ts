// Converse answer blocks other than text, toolUse and reasoningContent, in canonical terms:
//   image (bytes, or an S3 location) -> an image part; citationsContent -> its cited text as a text
//   part, the citations named `citations` (they point into the request's documents by character,
//   page or chunk: a canonical citation is a URL); document, video, guardContent and any kind
//   Relay does not know -> nothing, named by their Converse key in x-relay-dropped.
import type { ImagePart, TextPart } from '../../../core/plugin-api/canonical.ts';
import type { ConverseBlock, ConverseCitations, ConverseImage } from './wire.ts';

/** What the answer decoders drop or change, and why. Pinned by test/translation/drop-names.test.ts. */
export const CONVERSE_RESPONSE_DROPPED = {
  'images in answers': 'mapped to image parts (bytes, or the s3:// location); a client shape with no place for an image in an answer names `image`',
  'images in streamed answers': 'no stream event carries an image: named `image` (in the header, or an x-relay-dropped trailer once the stream has begun)',
  'citationsContent': 'its cited text mapped to a text part; the citations (a place in a document of the request, not a URL) named `citations`',
  'citation deltas in streamed answers': 'named `citations` (the cited text arrives as text deltas)',
  'toolUse deltas whose input is not a string': 'an object sent as its JSON text; another value named `toolUse.input`',
  'toolUse inputs in answers that are not an object': 'a string taken as the arguments text as it is (never encoded again); another value named `toolUse.input` and read as no input (the arguments `{}` of a function, the empty text of a custom tool)',
  'document, video and guardContent blocks, and block kinds Relay does not know': 'named by their Converse key (`document`, `video`, `guardContent`, ...)',
} as const;

/** The name of a toolUse input that is neither text, an object nor absent. */
export const TOOL_INPUT_NAME = 'toolUse.input';

/** Pushes `name` onto `dropped` unless it is there already (a stream names a kind once). */
export function nameDropped(dropped: string[], name: string): void {
  if (!dropped.includes(name)) dropped.push(name);
}

/** The canonical image of a Converse image block, or null when it holds neither bytes nor an S3 location. */
export function imageOfBlock(image: ConverseImage | undefined): ImagePart | null {
  const source = image?.source as { bytes?: unknown; s3Location?: { uri?: unknown } } | undefined;
  if (typeof image?.format === 'string' && typeof source?.bytes === 'string') {
    return { type: 'image', source: { type: 'base64', media_type: `image/${image.format}`, data: source.bytes } };
  }
  if (typeof source?.s3Location?.uri === 'string') return { type: 'image', source: { type: 'url', url: source.s3Location.uri } };
  return null;
}

/** The cited text of a citationsContent block as a text part (null when it has none); its citations are named. */
export function citedText(block: ConverseCitations, dropped: string[]): TextPart | null {
  if (Array.isArray(block.citations) && block.citations.length > 0) nameDropped(dropped, 'citations');
  const text = (Array.isArray(block.content) ? block.content : []).map((c) => (typeof c?.text === 'string' ? c.text : '')).join('');
  return text === '' ? null : { type: 'text', text };
}

/** Names every kind a block holds (a block the decoder has no canonical part for). */
export function nameBlock(block: ConverseBlock | Record<string, unknown>, dropped: string[]): void {
  for (const key of Object.keys(block ?? {})) nameDropped(dropped, key);
}
