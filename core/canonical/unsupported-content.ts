// The refusal for a content part an upstream (or the canonical shape) cannot carry: a 400 that
// names the part and the model, never a silent drop (issue 44).
import { RelayError } from '../errors.ts';

export function unsupportedContent(part: string, model: string, why: string): RelayError {
  return new RelayError('RELAY_ERR_CONTENT_UNSUPPORTED', `The model \`${model}\` cannot take ${part} here: ${why}.`);
}
