// What an inference endpoint reads from a request before the pipeline runs: a JSON object with a
// `model` string and an optional boolean `stream`. On passthrough nothing else is parsed: the body
// is checked as JSON and those two members are read from their bytes (json-scan-wasm/); the whole
// body is parsed only when translation or a rewrite asks for it (InferenceCall.json()).
import { RelayError } from '../errors.ts';
import { TopLevelMembers, type ValueSpan } from './json-scan-wasm/wasm-scanner.ts';
import { duplicateKeyError } from './duplicate-keys.ts';

export interface InferenceBody {
  readonly model: string;
  readonly stream: boolean;
  /** Where the `model` value lies in the body's bytes (passthrough renames it in place). */
  readonly modelSpan: ValueSpan;
  /** Where each top-level member Relay reads lies, when present (passthrough sets them in place). */
  readonly spans: ReadonlyMap<string, ValueSpan>;
  /** Bit k set when some string in the body is READ_TEXTS[k] as written. */
  readonly seenTexts: number;
  /** Whether some string holds a \u escape of a letter or `_` (a read text may be spelled so). */
  readonly escapedLetter: boolean;
  /** Whether some object may be a reasoning item naming its id without encrypted content, as written (MemberScan). */
  readonly reasoningById: boolean;
  /** Object members the body holds at any depth, as written: a parse keeping fewer met a key twice (duplicate-keys.ts). */
  readonly memberCount: number;
}

const MODEL = 0;
const STREAM = 1;
/**
 * Top-level members Relay routes, bills or limits on (the fast-mode asks a policy may refuse,
 * Responses' `background`, refused on passthrough, and what names or stores upstream state checked
 * against its owner: a Responses conversation, the code containers Responses tools and a Messages
 * request's `container` name). Each must appear once: a body with `model` twice would be
 * authorized by one value and served by another (a parser that keeps the first key).
 */
const READ_MEMBERS = ['model', 'stream', 'stream_options', 'service_tier', 'speed', 'background', 'store', 'previous_response_id', 'input', 'tools', 'container'];
/**
 * Texts looked for in every string of the body, at any depth, in the same scan: what names
 * upstream state checked against its owner (a Messages `file_id`, a Responses `item_reference`),
 * so that an agent's turn naming none is not searched again.
 */
const READ_TEXTS = ['file_id', 'item_reference'];
const members = new TopLevelMembers(READ_MEMBERS, READ_TEXTS);

/** Whether `name` is a member read from the bytes (InferenceBody.spans knows where it lies, if present). */
export function isReadMember(name: string): boolean {
  return READ_MEMBERS.includes(name);
}

/**
 * Whether some string in the body, a key or a value at any depth, may be `text`: false only for a
 * read text the scan met nowhere, as written or spelled with escaped letters.
 */
export function mayHoldText(read: InferenceBody, text: string): boolean {
  const k = READ_TEXTS.indexOf(text);
  return k < 0 || read.escapedLetter || (read.seenTexts & (1 << k)) !== 0;
}

/**
 * Whether some object in the body, at any depth, may be a reasoning item naming a stored item by id
 * alone (`"type":"reasoning"`, a non-empty string `id`, no non-empty string `encrypted_content`):
 * false only when the scan met none, as written, and no escaped letter that could spell one.
 */
export function mayHoldReasoningById(read: InferenceBody): boolean {
  return read.reasoningById || read.escapedLetter;
}

/** application/json, with or without parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && /^application\/json\s*(;|$)/i.test(value);
}

/** Reads `model` and `stream` from a request body; a 400 naming what is wrong otherwise. */
export function readInferenceBody(raw: Buffer): InferenceBody {
  const scanned = members.scan(raw);
  if (scanned === null) {
    parseJsonBody(raw); // throws the parser's own message
    throw new RelayError('RELAY_ERR_BAD_REQUEST', 'the request body must be a JSON object', { field: '/' });
  }
  if (scanned.duplicate !== null) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', `'${scanned.duplicate}' appears more than once in the request body`, { field: `/${scanned.duplicate}` });
  }
  const modelSpan = scanned.spans[MODEL];
  const model = modelSpan ? stringValue(raw, modelSpan) : null;
  if (!modelSpan || model === null || model.length === 0) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', modelSpan ? "'model' must be a non-empty string" : "'model' is required", { field: '/model' });
  }
  const streamSpan = scanned.spans[STREAM];
  const stream = streamSpan ? literalValue(raw, streamSpan) : null;
  if (stream === undefined) throw new RelayError('RELAY_ERR_BAD_REQUEST', "'stream' must be a boolean", { field: '/stream' });
  const spans = new Map<string, ValueSpan>();
  READ_MEMBERS.forEach((name, i) => { if (scanned.spans[i]) spans.set(name, scanned.spans[i]!); });
  return { model, stream: stream === true, modelSpan, spans, seenTexts: scanned.seen, escapedLetter: scanned.escapedLetter, reasoningById: scanned.reasoningById, memberCount: scanned.memberCount };
}

/**
 * The body with top-level members set (JSON text per name) in its bytes: a member the body has is
 * replaced where it lies, one it lacks is added first; every other byte stays. Null when a member
 * to set is not one Relay reads (its place is unknown).
 */
export function setTopLevelMembers(raw: Buffer, read: InferenceBody, values: Record<string, string>): Buffer | null {
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const added: string[] = [];
  for (const [name, text] of Object.entries(values)) {
    if (!READ_MEMBERS.includes(name)) return null;
    const span = read.spans.get(name);
    if (span) edits.push({ start: span.start, end: span.end, text });
    else added.push(`${JSON.stringify(name)}:${text},`);
  }
  if (added.length > 0) {
    const open = raw.indexOf(0x7b); // the scan accepted an object: its first brace opens it
    edits.push({ start: open + 1, end: open + 1, text: added.join('') });
  }
  edits.sort((a, b) => a.start - b.start);
  const parts: Buffer[] = [];
  let at = 0;
  for (const edit of edits) {
    parts.push(raw.subarray(at, edit.start), Buffer.from(edit.text));
    at = edit.end;
  }
  parts.push(raw.subarray(at));
  return Buffer.concat(parts);
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

/** Arrays and objects nested deeper than this are refused: codecs and JSON.stringify recurse. */
export const MAX_NESTING = 128;

/**
 * Parses a body the scan accepted, refusing nesting past MAX_NESTING (400) and, given the members
 * the scan counted (InferenceBody.memberCount), a key written twice in one object (400).
 */
export function parseInferenceJson(raw: Buffer, written?: number): Record<string, unknown> {
  const json = parseJsonBody(raw) as Record<string, unknown>;
  let kept = 0;
  // Iterative, so that the check itself cannot overflow the stack.
  const stack: Array<[unknown, number]> = [[json, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (depth > MAX_NESTING) {
      throw new RelayError('RELAY_ERR_BAD_REQUEST', `the request body nests arrays and objects deeper than ${MAX_NESTING} levels`);
    }
    if (value === null || typeof value !== 'object') continue;
    const children = Array.isArray(value) ? value : Object.values(value);
    if (!Array.isArray(value)) kept += children.length;
    for (const child of children) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  if (written !== undefined && kept !== written) throw duplicateKeyError(raw.toString('utf8'), '');
  return json;
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
  return JSON.parse(raw.toString('utf8', span.start, span.end)) as string;
}

export function unsupportedMediaType(): RelayError {
  return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE', 'unsupported content-type: send application/json');
}
