// The refusal for a content part or a parameter an upstream (or the canonical shape) cannot carry:
// a 400 that names it and the model, never a silent drop (issue 44).
import { RelayError } from '../errors.ts';

export function unsupportedContent(part: string, model: string, why: string): RelayError {
  return new RelayError('RELAY_ERR_CONTENT_UNSUPPORTED', `The model \`${model}\` cannot take ${part} here: ${why}.`);
}

/** A parameter that would change the answer's content and that the upstream has no way to honour. */
export function unsupportedParameter(parameter: string, model: string, why: string): RelayError {
  return new RelayError('RELAY_ERR_BAD_REQUEST', `The model \`${model}\` cannot take \`${parameter}\` here: ${why}.`, { field: parameter });
}
