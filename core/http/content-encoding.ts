// A request body's Content-Encoding: gzip, deflate and br are decoded (zstd too where this Node has
// it), off the event loop and never past the body limit, so a small compressed body cannot unpack
// into more memory than an uncompressed one may hold. Anything else is a 415 naming the coding.
import zlib from 'node:zlib';
import { RelayError } from '../errors.ts';

type Decode = (body: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions, done: (err: Error | null, out: Buffer) => void) => void;

const zstdDecompress = (zlib as unknown as { zstdDecompress?: Decode }).zstdDecompress;

const DECODERS: ReadonlyMap<string, Decode> = new Map<string, Decode>([
  ['gzip', zlib.gunzip],
  ['x-gzip', zlib.gunzip],
  ['deflate', zlib.inflate],
  ['br', zlib.brotliDecompress],
  ...(zstdDecompress ? [['zstd', zstdDecompress] as [string, Decode]] : []),
]);

const ACCEPTED = [...DECODERS.keys()].filter((name) => name !== 'x-gzip').join(', ');

/** The body's coding, lower-cased; null for none or `identity`. */
export function contentCoding(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = (Array.isArray(header) ? header.join(',') : header).trim().toLowerCase();
  return value === '' || value === 'identity' ? null : value;
}

/** A 415 for a coding Relay cannot decode (several codings stacked included), or null when it can. */
export function unsupportedCoding(coding: string): RelayError | null {
  if (DECODERS.has(coding)) return null;
  const shown = coding.length > 64 ? `${coding.slice(0, 64)}...` : coding;
  return new RelayError('RELAY_ERR_UNSUPPORTED_MEDIA_TYPE', `content-encoding "${shown}" is not accepted: send the body as is, or in one of ${ACCEPTED}`);
}

/** Decodes `body` from `coding` (one unsupportedCoding accepts); a decoded body over limitBytes is a 413. */
export function decodeBody(body: Buffer, coding: string, limitBytes: number, done: (err: Error | null, decoded?: Buffer) => void): void {
  const decode = DECODERS.get(coding)!;
  decode(body, { maxOutputLength: limitBytes }, (err, decoded) => {
    if (!err) return done(null, decoded);
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      return done(new RelayError('RELAY_ERR_BODY_TOO_LARGE', `request body is larger than the limit of ${limitBytes} bytes (server.bodyLimitBytes) once decoded`));
    }
    done(new RelayError('RELAY_ERR_BAD_REQUEST', `the request body is not valid ${coding}, as its content-encoding says`));
  });
}
