// Takes Relay's host key out of an answer written to the caller in pieces (a passed-through
// stream or body, a translated stream): an upstream may quote the key in an error event mid-stream
// or in a 200 that carries an error, and the key may be split between two reads. Each occurrence
// is replaced by a mask of the same length, so a Content-Length already sent still holds; a piece
// without the key, and not ending in its first bytes, goes on as the same Buffer. HostKeyMask
// takes it out of whole texts Relay keeps of an answer (a stored Responses object), the same way.
// A host's header values (an API gateway's key, HostSecrets) are taken out beside the key, and so
// are the credentials a call made from the key (an access token, a signing key id).
import { REDACTED, spellings } from './upstream-error.ts';

/**
 * Shorter keys are placeholders ("EMPTY", "ollama"), not secrets, and masking their text out of
 * answers would corrupt them; longer ones are not sent as such (a service account document).
 */
const MIN_KEY_BYTES = 16;
const MAX_KEY_BYTES = 1024;
/** Credentials a call sent (UpstreamResponse.sentCredentials) may be longer: an Entra ID token is a JWT of 1-3 KB. */
const MAX_SENT_BYTES = 8192;
/** Joined sets kept per host; access tokens change about hourly, so a host meets few at a time. */
const MAX_JOINED = 64;

/** What is searched for and written instead: made once per key, not per answer. */
interface ScrubPattern {
  needles: Buffer[];
  masks: Buffer[];
  /** Bytes any spelling of the key holds: a piece ending in another byte holds nothing back. */
  keyBytes: Uint8Array;
  /** The spellings and their masks as strings, for whole texts (HostKeyMask); made when first asked. */
  texts?: { plain: string[]; json: string[]; masks: string[] };
  /** The key's HostKeyMask, made once. */
  mask?: HostKeyMask;
}

/** Patterns by key; the catalog's host keys are few, so the map is only emptied when it grows past this. */
const MAX_PATTERNS = 256;
const patterns = new Map<string, ScrubPattern | null>();

function maskable(secret: string, maxBytes = MAX_KEY_BYTES): boolean {
  const bytes = Buffer.byteLength(secret);
  return bytes >= MIN_KEY_BYTES && bytes <= maxBytes && !/\s/.test(secret);
}

/**
 * The secrets a host's headers send besides the host key, made once per host version
 * (sendable-host.ts): each value's words long enough to be a secret ("Bearer <token>" gives the
 * token), and the patterns they make with each host key, so a request pays one Map lookup.
 */
export class HostSecrets {
  /** Patterns with each credential ('' for none), made when first asked. */
  readonly patterns = new Map<string, ScrubPattern | null>();

  /** This host's secrets joined with a call's sent credentials, by those credentials (HostSecrets.withSent). */
  private readonly joined = new Map<string, HostSecrets | null>();

  private constructor(readonly values: readonly string[]) {}

  /** The secrets of `values` (a host's header values), or null when none is long enough to be one. */
  static of(values: readonly string[]): HostSecrets | null {
    const words = [...new Set(values.flatMap((v) => v.split(/\s+/)).filter((w) => maskable(w)))];
    return words.length > 0 ? new HostSecrets(words) : null;
  }

  /**
   * `host`'s secrets and the credentials a call sent that derive from the host key (an access
   * token, a signing key id: UpstreamResponse.sentCredentials), made once per set and host.
   */
  static withSent(host: HostSecrets | null, sent: readonly string[] | undefined): HostSecrets | null {
    if (sent === undefined || sent.length === 0) return host;
    const cache = host?.joined ?? joinedWithoutHost;
    const cacheKey = sent.join('\n');
    let joined = cache.get(cacheKey);
    if (joined !== undefined) return joined;
    const words = [...new Set([...(host?.values ?? []), ...sent.filter((w) => maskable(w, MAX_SENT_BYTES))])];
    joined = words.length > 0 ? new HostSecrets(words) : null;
    if (cache.size >= MAX_JOINED) cache.clear();
    cache.set(cacheKey, joined);
    return joined;
  }
}

const joinedWithoutHost = new Map<string, HostSecrets | null>();

/** The pattern of the key and the host's secrets, or null when there is nothing to take out (see MIN_KEY_BYTES). */
function patternOf(credential: string | null, host: HostSecrets | null): ScrubPattern | null {
  const cache = host === null ? patterns : host.patterns;
  const cacheKey = credential ?? '';
  let pattern = cache.get(cacheKey);
  if (pattern !== undefined) return pattern;
  const secrets = [...(credential !== null && maskable(credential) ? [credential] : []), ...(host?.values ?? [])];
  pattern = secrets.length > 0 ? makePattern(secrets) : null;
  if (cache.size >= MAX_PATTERNS) cache.clear();
  cache.set(cacheKey, pattern);
  return pattern;
}

function makePattern(secrets: readonly string[]): ScrubPattern {
  const needles = secrets.flatMap(spellings).map((s) => Buffer.from(s, 'utf8'));
  const masks = needles.map((n) => Buffer.from(n.length >= REDACTED.length ? REDACTED.padEnd(n.length, '*') : '*'.repeat(n.length)));
  const keyBytes = new Uint8Array(256);
  for (const needle of needles) for (const byte of needle) keyBytes[byte] = 1;
  return { needles, masks, keyBytes };
}

export class CredentialScrubber {
  private readonly needles: Buffer[];
  private readonly masks: Buffer[];
  private readonly keyBytes: Uint8Array;
  /** The end of the last piece that may begin the key, held until the next piece says. */
  private carry: Buffer | null = null;

  private constructor(pattern: ScrubPattern) {
    ({ needles: this.needles, masks: this.masks, keyBytes: this.keyBytes } = pattern);
  }

  /** A scrubber for `credential` and the host's secrets, or null when there is nothing to take out (see MIN_KEY_BYTES). */
  static of(credential: string | null, host: HostSecrets | null = null): CredentialScrubber | null {
    if (credential === null && host === null) return null;
    const pattern = patternOf(credential, host);
    return pattern === null ? null : new CredentialScrubber(pattern);
  }

  /** What of `chunk` may be sent now (a key's first bytes at its end wait for the next piece). */
  push(chunk: Buffer): Buffer {
    let data = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = null;
    let copied = false;
    for (let i = 0; i < this.needles.length; i++) {
      const needle = this.needles[i]!;
      for (let at = data.indexOf(needle); at !== -1; at = data.indexOf(needle, at + needle.length)) {
        // Copied before the first change: the upstream's buffer may still be read (the usage tap).
        if (!copied) {
          data = Buffer.from(data);
          copied = true;
        }
        this.masks[i]!.copy(data, at);
      }
    }
    const held = this.heldBack(data);
    if (held === 0) return data;
    this.carry = Buffer.from(data.subarray(data.length - held));
    return data.subarray(0, data.length - held);
  }

  /** The answer is over: what was held back (the start of a key that never came whole). */
  end(): Buffer {
    const rest = this.carry ?? EMPTY;
    this.carry = null;
    return rest;
  }

  /** How many bytes at the end of `data` could be the first bytes of a spelling of the key. */
  private heldBack(data: Buffer): number {
    const length = data.length;
    if (length === 0 || this.keyBytes[data[length - 1]!] === 0) return 0;
    let longest = 0;
    for (const needle of this.needles) {
      // Where the key could begin: its first byte, within its length minus one of the end.
      for (let at = data.indexOf(needle[0]!, Math.max(0, length - needle.length + 1)); at !== -1; at = data.indexOf(needle[0]!, at + 1)) {
        const tail = length - at;
        if (tail > longest && data.compare(needle, 0, tail, at, length) === 0) longest = tail;
        if (tail <= longest) break;
      }
    }
    return longest;
  }
}

const EMPTY = Buffer.alloc(0);

/**
 * Masks the key out of a whole text Relay keeps of an answer (a stored Responses object): the same
 * spellings and the same masks as CredentialScrubber, so what is kept reads as what the caller got.
 * The key stays inside (a plugin handed one never holds the key itself, to log or to echo).
 */
export class HostKeyMask {
  readonly #pattern: ScrubPattern;

  private constructor(pattern: ScrubPattern) {
    this.#pattern = pattern;
  }

  /** The mask for `credential` and the host's secrets, or null when there is nothing to take out (see MIN_KEY_BYTES). */
  static of(credential: string | null, host: HostSecrets | null = null): HostKeyMask | null {
    if (credential === null && host === null) return null;
    const pattern = patternOf(credential, host);
    return pattern === null ? null : pattern.mask ??= new HostKeyMask(pattern);
  }

  /** JSON text as JSON.stringify writes it, the key masked in every string and member name; the same string when it has none. */
  json(text: string): string {
    const texts = textsOf(this.#pattern);
    return masked(text, texts.json, texts.masks);
  }

  /** A plain string (an id taken from the answer), the key masked; the same string when it has none. */
  text(value: string): string {
    const texts = textsOf(this.#pattern);
    return masked(value, texts.plain, texts.masks);
  }
}

function textsOf(pattern: ScrubPattern): NonNullable<ScrubPattern['texts']> {
  if (pattern.texts) return pattern.texts;
  const plain = pattern.needles.map((n) => n.toString('utf8'));
  // JSON.stringify escapes character by character: a string holding the key holds this spelling of it.
  const json = plain.map((s) => JSON.stringify(s).slice(1, -1));
  return pattern.texts = { plain, json, masks: pattern.masks.map((m) => m.toString('utf8')) };
}

function masked(text: string, needles: string[], masks: string[]): string {
  let out = text;
  for (let i = 0; i < needles.length; i++) if (out.includes(needles[i]!)) out = out.split(needles[i]!).join(masks[i]!);
  return out;
}
