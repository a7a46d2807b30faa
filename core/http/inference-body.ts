// What an inference endpoint reads from a request before the pipeline runs: a JSON object with a
// `model` string and an optional boolean `stream`. Nothing else is parsed on passthrough: the lane
// checks the body as JSON in place and reads those two members from their bytes (json-scan.ts),
// and the whole body is parsed only when something asks for `json` (translation, a request
// rewritten for usage). Used by the inference lane and by the Fastify route behind it, so both
// refuse alike.
import { RelayError } from '../errors.ts';
import type { BodyBytes } from './body-bytes.ts';
import type { ValueSpan } from './json-scan.ts';
import { topLevelScanner } from './json-scan-wasm/wasm-scanner.ts';
import { parseInPieces } from './json-pieces.ts';

export interface InferenceBody {
  /** The parsed body; where the body was scanned, parsed on first read. Throws once released. */
  readonly json: Record<string, unknown>;
  readonly model: string;
  readonly stream: boolean;
  /** Lets go of the parsed body (the pipeline, at the answer's first byte: see body-bytes.ts). */
  release(): void;
}

const RELEASED_JSON = 'the parsed request was let go once its answer began (InferenceBody.release)';

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
  return new ParsedBody(body, body.model, body.stream === true);
}

class ParsedBody implements InferenceBody {
  private parsed: Record<string, unknown> | null;

  constructor(json: Record<string, unknown>, readonly model: string, readonly stream: boolean) {
    this.parsed = json;
  }

  get json(): Record<string, unknown> {
    if (this.parsed === null) throw new Error(RELEASED_JSON);
    return this.parsed;
  }

  release(): void {
    this.parsed = null;
  }
}

const MODEL = 0;
const STREAM = 1;
const members = topLevelScanner(['model', 'stream']);

/**
 * The body read without parsing it (see json-scan.ts for the measured reason): null when it is
 * not a JSON object with a non-empty string `model` and a boolean or null `stream`, and then
 * parseJsonBody and checkInferenceBody say what is wrong.
 */
export function scanInferenceBody(raw: BodyBytes): InferenceBody | null {
  const scanned = members.scanBody(raw);
  if (scanned === null) return null;
  const { spans, whole } = scanned;
  const model = spans[MODEL] ? stringValue(whole, spans[MODEL]) : null;
  if (model === null || model.length === 0) return null;
  const stream = spans[STREAM] ? literalValue(whole, spans[STREAM]) : null;
  if (stream === undefined) return null;
  return new ScannedBody(raw, model, stream === true);
}

/** `true`, `false` or `null` as written; undefined for any other value. */
function literalValue(raw: Buffer, span: ValueSpan): boolean | null | undefined {
  if (span.end - span.start > 5) return undefined;
  const text = raw.toString('latin1', span.start, span.end);
  return text === 'true' ? true : text === 'false' ? false : text === 'null' ? null : undefined;
}

/** A JSON string value's text; null when the value is not a string. */
function stringValue(raw: Buffer, span: ValueSpan): string | null {
  if (raw[span.start] !== 0x22) return null;
  for (let i = span.start + 1; i < span.end - 1; i++) {
    if (raw[i] === 0x5c) return JSON.parse(raw.toString('utf8', span.start, span.end)) as string;
  }
  return raw.toString('utf8', span.start + 1, span.end - 1);
}

class ScannedBody implements InferenceBody {
  private parsed: Record<string, unknown> | undefined;
  private released = false;

  constructor(private readonly raw: BodyBytes, readonly model: string, readonly stream: boolean) {}

  get json(): Record<string, unknown> {
    if (this.released) throw new Error(RELEASED_JSON);
    // The scan accepted it: JSON.parse does too, and it is an object. In pieces: json-pieces.ts.
    this.parsed ??= parseInPieces(this.raw.joined()) as Record<string, unknown>;
    return this.parsed;
  }

  release(): void {
    this.released = true;
    this.parsed = undefined;
  }
}

export function unsupportedMediaType(): RelayError {
  return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE', 'unsupported content-type: send application/json');
}
