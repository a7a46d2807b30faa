// What an inference endpoint reads from a request before the pipeline runs: a JSON object with a
// `model` string and an optional boolean `stream`. Nothing else is parsed on passthrough. Used by
// the inference lane and by the Fastify route behind it, so both refuse alike.
import { RelayError } from '../errors.ts';

export interface InferenceBody {
  json: Record<string, unknown>;
  model: string;
  stream: boolean;
}

/** application/json, with or without parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && /^application\/json\s*(;|$)/i.test(value);
}

/** Parses the body bytes as JSON; a 400 naming the problem otherwise. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new RelayError('RELAY_ERR_INVALID_JSON', 'request body is empty; expected a JSON object');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new RelayError('RELAY_ERR_INVALID_JSON', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Checks the parsed body of an inference request. */
export function checkInferenceBody(json: unknown): InferenceBody {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', 'the request body must be a JSON object', { field: '/' });
  }
  const body = json as Record<string, unknown>;
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', body.model === undefined ? "'model' is required" : "'model' must be a non-empty string", { field: '/model' });
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', "'stream' must be a boolean", { field: '/stream' });
  }
  return { json: body, model: body.model, stream: body.stream === true };
}

export function unsupportedMediaType(): RelayError {
  return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE', 'unsupported content-type: send application/json');
}
