// An upstream's error answer to a request Relay signed with one of its own host keys. Vendors
// quote a refused key back ("Incorrect API key provided: sk-..."), and the caller must never see
// Relay's credential: the body is read whole (error bodies are small), decompressed when the
// upstream compressed it, and every occurrence of the key is replaced.
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { UpstreamBody } from '../hooks.ts';
import { readUpstreamBody } from '../http/read-body.ts';

/** What replaces the host key in an error body. */
export const REDACTED = '[redacted host key]';
/** Error bodies are read up to this size; the rest is not read (no vendor's error comes near it). */
export const MAX_ERROR_BODY_BYTES = 1024 * 1024;

const DECOMPRESS: Record<string, (buf: Buffer, options: { maxOutputLength: number }) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/** The body as read: at most MAX_ERROR_BODY_BYTES, the rest never read. */
export async function readErrorBody(body: UpstreamBody): Promise<Buffer> {
  return (await readUpstreamBody(body, MAX_ERROR_BODY_BYTES)).bytes;
}

/**
 * The body without `credential`, and the content-encoding it is now in: decoded when it was
 * gzip, deflate or br, so that the key can be found in it; left as it is when it is in an
 * encoding Relay cannot read, or cannot be decoded.
 */
export function redactCredential(body: Buffer, encoding: string | undefined, credential: string): { body: Buffer; encoding: string | undefined } {
  let plain = body;
  let outEncoding = encoding;
  const name = encoding?.trim().toLowerCase();
  if (name && name !== 'identity') {
    const decode = DECOMPRESS[name];
    if (!decode) return { body, encoding };
    try {
      plain = decode(body, { maxOutputLength: MAX_ERROR_BODY_BYTES });
      outEncoding = undefined;
    } catch {
      return { body, encoding };
    }
  }
  return { body: replaceAll(plain, credential), encoding: outEncoding };
}

/** `text` (a decoded error message) without `credential`. */
export function redactCredentialText(text: string, credential: string): string {
  return credential === '' ? text : text.split(credential).join(REDACTED);
}

function replaceAll(body: Buffer, credential: string): Buffer {
  const needle = Buffer.from(credential, 'utf8');
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
