// Gemini answer parts other than text, thoughts and function calls, in canonical terms:
//   inlineData / fileData of an image (image output models) -> an image part (bytes, or the URI);
//   any other inlineData / fileData (audio of a TTS model, say) -> nothing, named `inlineData` /
//   `fileData` in x-relay-dropped (an image in a thought: `reasoning.image`); executableCode and
//   codeExecutionResult (the code execution tool) -> text the client reads: the code as a fenced
//   block, then its output as another.
import type { ImagePart } from '../../../core/plugin-api/canonical.ts';
import type { GeminiPart } from './wire.ts';

/** What the answer decoders drop or change, and why. Pinned by test/translation/drop-names.test.ts. */
export const GEMINI_RESPONSE_DROPPED = {
  'images (inlineData, fileData) in answers': 'mapped to image parts (bytes, or the file URI); a client shape with no place for an image in an answer names `image`',
  'images in streamed answers': 'no stream event carries an image: named `image` (in the header, or an x-relay-dropped trailer once the stream has begun)',
  'inline and file data that is not an image (audio, ...)': 'named `inlineData` / `fileData`',
  'images in thoughts (an image model\'s interim drafts)': 'a reasoning part carries text only: named `reasoning.image`',
  'executableCode and codeExecutionResult': 'mapped to text: the code as a fenced block, then its output as another (a failed run says so first)',
  'executableCode and codeExecutionResult in thoughts': 'mapped to reasoning text, the same fenced blocks',
  'functionCall args that are not an object, whole or streamed': 'a string taken as the arguments text as it is (never encoded again), an array as its JSON; another value (a number, a boolean) named `functionCall.args` and read as no input (the arguments `{}` of a function, the empty text of a custom tool); see tool-arguments.ts',
} as const;

/** The image a data part holds, or null (its name pushed onto `dropped` when it holds something else). */
export function imageOfDataPart(part: GeminiPart, dropped: string[]): ImagePart | null {
  if (part.inlineData) {
    if (isImage(part.inlineData.mimeType) && typeof part.inlineData.data === 'string') {
      return { type: 'image', source: { type: 'base64', media_type: part.inlineData.mimeType, data: part.inlineData.data } };
    }
    dropped.push('inlineData');
  }
  if (part.fileData) {
    if (isImage(part.fileData.mimeType) && typeof part.fileData.fileUri === 'string') return { type: 'image', source: { type: 'url', url: part.fileData.fileUri } };
    dropped.push('fileData');
  }
  return null;
}

function isImage(mimeType: unknown): mimeType is string {
  return typeof mimeType === 'string' && mimeType.toLowerCase().startsWith('image/');
}

/** The text a client reads for a code-execution part, or null when the part is neither kind. */
export function codeExecutionText(part: GeminiPart): string | null {
  if (part.executableCode) {
    const language = (part.executableCode.language ?? '').toLowerCase();
    return fenced(part.executableCode.code ?? '', language === 'language_unspecified' ? '' : language);
  }
  if (part.codeExecutionResult) {
    const { outcome, output } = part.codeExecutionResult;
    const failed = outcome !== undefined && outcome !== 'OUTCOME_OK';
    // A failed run says so before its output (which then holds the traceback).
    if (failed && !output) return `Code execution ended with ${outcome}.`;
    return `${failed ? `Code execution ended with ${outcome}:\n` : ''}${fenced(output ?? '', 'output')}`;
  }
  return null;
}

/**
 * The text of a thought: its text, or the code it ran and what that printed (code execution while
 * thinking), set apart by blank lines when it continues a streamed reasoning part.
 */
export function thoughtText(part: GeminiPart, continues = false): string | null {
  if (typeof part.text === 'string' && part.text !== '') return part.text;
  const code = codeExecutionText(part);
  return code === null || !continues ? code : `\n\n${code}\n\n`;
}

/** A fenced block whose fence is longer than any backtick run in the text. */
function fenced(text: string, info: string): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const body = text === '' || text.endsWith('\n') ? text : `${text}\n`;
  return `${fence}${info}\n${body}${fence}`;
}
