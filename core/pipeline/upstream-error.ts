// An upstream's error answer to a request Relay signed with one of its own host keys. Vendors
// quote a refused key back ("Incorrect API key provided: sk-..."), and the caller must never see
// Relay's credential: the body is read whole (error bodies are small), decompressed when the
// upstream compressed it, and every occurrence of the key is replaced: as sent, JSON-escaped
// ("\/" for "/", which some servers write), and in any escaped spelling a JSON reader would decode.
// A body Relay cannot check (an encoding it cannot decode, one too large once decoded, JSON too
// deep to rewrite) is not passed on at all. zstd is decoded where this Node has it (22.15+).
import zlib from 'node:zlib';
import type { UpstreamBody, UpstreamResponse } from '../hooks.ts';
import { readUpstreamBody } from '../http/read-body.ts';

/** What replaces the host key in an error body. */
export const REDACTED = '[redacted host key]';
/** Error bodies are read up to this size; the rest is not read (no vendor's error comes near it). */
export const MAX_ERROR_BODY_BYTES = 1024 * 1024;

type Decompress = (buf: Buffer, options: { maxOutputLength: number }) => Buffer;

/** Node 20's zlib has no zstd (@types/node 20 does not name it either). */
const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: Decompress }).zstdDecompressSync;

// A Map, not an object: a coding named "constructor" or "__proto__" is not a decoder.
const DECOMPRESS: ReadonlyMap<string, Decompress> = new Map<string, Decompress>([
  ['gzip', zlib.gunzipSync],
  ['x-gzip', zlib.gunzipSync],
  ['deflate', zlib.inflateSync],
  ['br', zlib.brotliDecompressSync],
  ...(zstdDecompressSync ? [['zstd', zstdDecompressSync] as [string, Decompress]] : []),
]);

/** The body as read: at most MAX_ERROR_BODY_BYTES, the rest never read. */
export async function readErrorBody(body: UpstreamBody): Promise<Buffer> {
  return (await readUpstreamBody(body, MAX_ERROR_BODY_BYTES)).bytes;
}

/**
 * An error answer's body for an adapter to classify (a key refusal, an exception name): `bytes` as
 * they came, to pass on (at most MAX_ERROR_BODY_BYTES), and `decoded` from the answer's
 * content-encoding (a proxy may compress it; the same bytes when it is not), or null when Relay
 * cannot decode it.
 */
export async function readUpstreamError(res: Pick<UpstreamResponse, 'headers' | 'body'>): Promise<{ bytes: Buffer; decoded: Buffer | null }> {
  const bytes = await readErrorBody(res.body);
  const coding = res.headers['content-encoding'];
  const read = decodeErrorBody(bytes, Array.isArray(coding) ? coding.join(', ') : coding);
  return { bytes, decoded: 'plain' in read ? read.plain : null };
}

/** An error body without the credential, decoded from its content-encoding; or why it cannot be passed on. */
export type RedactedBody = { body: Buffer } | { unreadable: string };

/** The body decoded from its content-encoding (at most MAX_ERROR_BODY_BYTES), or why it cannot be. */
export function decodeErrorBody(body: Buffer, encoding: string | undefined): { plain: Buffer } | { unreadable: string } {
  const name = encoding?.trim().toLowerCase();
  if (!name || name === 'identity') return { plain: body };
  const shown = JSON.stringify(name.slice(0, 64));
  const decode = DECOMPRESS.get(name);
  if (!decode) return { unreadable: `it is in content-encoding ${shown}, which Relay does not decode${name === 'zstd' ? ' on this Node (zstd needs Node 22.15 or later)' : ''}` };
  try {
    return { plain: decode(body, { maxOutputLength: MAX_ERROR_BODY_BYTES }) };
  } catch (err) {
    const tooLarge = err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
    return { unreadable: tooLarge ? `it is larger than ${MAX_ERROR_BODY_BYTES} bytes once decoded from ${shown}` : `it is not valid ${shown}, as its content-encoding says` };
  }
}

/**
 * The body without `credential` (nor `others`, the host's header values it was sent with): decoded
 * when it was gzip, deflate, br or zstd, so that the key can be found in it; `unreadable` when Relay
 * cannot tell whether it holds the key.
 */
export function redactCredential(body: Buffer, encoding: string | undefined, credential: string, others: readonly string[] = []): RedactedBody {
  const decoded = decodeErrorBody(body, encoding);
  if ('unreadable' in decoded) return decoded;
  const secrets = others.length === 0 ? [credential] : [credential, ...others];
  let plain = decoded.plain;
  for (const secret of secrets) for (const needle of spellings(secret)) plain = replaceAll(plain, Buffer.from(needle, 'utf8'));
  // Without a backslash no escaped spelling is left: the usual error body stops here.
  if (!plain.includes(BACKSLASH)) return { body: plain };
  let text = plain.toString('utf8');
  const original = text;
  for (const secret of secrets) {
    if (secret === '') continue;
    const rewritten = withoutInJson(text, secret);
    if (rewritten === null) return { unreadable: 'its JSON is nested too deeply to check for the host key' };
    text = rewritten;
  }
  return { body: text === original ? plain : Buffer.from(text, 'utf8') };
}

/** `text` (a decoded error message) without `credential` (nor `others`, the host's header values). */
export function redactCredentialText(text: string, credential: string, others: readonly string[] = []): string {
  let out = text;
  for (const secret of others.length === 0 ? [credential] : [credential, ...others]) {
    for (const needle of spellings(secret)) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
  }
  return out;
}

/** The key as sent, and with "/" escaped as JSON allows (PHP's json_encode does it by default). */
export function spellings(credential: string): string[] {
  if (credential === '') return [];
  return credential.includes('/') ? [credential, credential.replaceAll('/', '\\/')] : [credential];
}

/**
 * `text` with the key taken out of every string and member name a JSON reader would decode
 * (escapes such as \u0073k-... included); `text` itself when it is not JSON or has no key; null
 * when it holds the key but is nested too deeply to write again.
 */
function withoutInJson(text: string, credential: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text); // V8's parser is not recursive: any depth is read
  } catch {
    return text;
  }
  let found = false;
  const clean = (s: string): string => {
    if (!s.includes(credential)) return s;
    found = true;
    return s.split(credential).join(REDACTED);
  };
  if (typeof parsed === 'string') parsed = clean(parsed);
  // Walked with a stack of its own: a deep body must not overflow the call stack.
  const stack: unknown[] = [parsed];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== 'object') continue;
    const node = value as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const member = node[key];
      if (typeof member === 'string') node[key] = clean(member);
      else if (member !== null && typeof member === 'object') stack.push(member);
      const renamed = Array.isArray(node) ? key : clean(key);
      if (renamed !== key) {
        node[renamed] = node[key];
        delete node[key];
      }
    }
  }
  if (!found) return text;
  try {
    return JSON.stringify(parsed);
  } catch {
    return null;
  }
}

function replaceAll(body: Buffer, needle: Buffer): Buffer {
  if (needle.length === 0) return body;
  let at = body.indexOf(needle);
  if (at === -1) return body;
  const parts: Buffer[] = [];
  let from = 0;
  for (; at !== -1; at = body.indexOf(needle, from)) {
    parts.push(body.subarray(from, at), REDACTED_BYTES);
    from = at + needle.length;
  }
  parts.push(body.subarray(from));
  return Buffer.concat(parts);
}

const REDACTED_BYTES = Buffer.from(REDACTED);
const BACKSLASH = 0x5c;
