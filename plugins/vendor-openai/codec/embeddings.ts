// OpenAI Embeddings ('openai.embeddings') is passed through byte-for-byte: there is no
// canonical form to translate to, only usage for the record and errors to read.
import { RelayError } from '../../../core/plugin-api.ts';
import type { ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { decodeOpenAIError } from './errors.ts';
import { usageFromChat } from './usage.ts';

const untranslatable = (): never => {
  throw new RelayError('RELAY_ERR_INTERNAL', 'openai.embeddings is passed through, never translated');
};

export const embeddingsUpstream: ShapeCodec = {
  encodeRequest: untranslatable,
  decodeResponse: untranslatable,
  streamDecoder: untranslatable,
  decodeError: decodeOpenAIError,
  usageFromBody: (body) => usageFromChat((body as { usage?: unknown } | null)?.usage),
  streamInspector: () => ({ inspect: () => 'output', usage: () => null }),
};
