// 'anthropic.messages' on Bedrock (InvokeModel): only passed through, never translated to
// (Converse serves translation), so this codec reads errors, usage and stream frames only.
// The adapter re-emits Bedrock's stream as Anthropic's own SSE and its errors in Anthropic's
// error body, so these read Anthropic's shapes.
import { RelayError } from '../../../core/plugin-api.ts';
import { messagesStreamInspector, usageOfMessagesAnswer, type MessagesAnswer, type ShapeCodec } from '../../../core/plugin-api/canonical.ts';
import { decodeBedrockError } from './errors.ts';

const notTranslated = (): never => {
  throw new RelayError('RELAY_ERR_INTERNAL', 'the Bedrock adapter translates through bedrock.converse, not anthropic.messages');
};

export const messagesPassthrough: ShapeCodec = {
  encodeRequest: notTranslated,
  decodeResponse: notTranslated,
  streamDecoder: notTranslated,
  decodeError: decodeBedrockError,
  usageFromBody: (body) => usageOfMessagesAnswer(body as MessagesAnswer | null),
  streamInspector: messagesStreamInspector,
};
