// Reasoning that a client must hand back unchanged (Responses `encrypted_content`) can come
// from any upstream. OpenAI's own encrypted content is passed as is; anything else (an
// Anthropic signature, redacted thinking data) is sealed in an envelope naming its origin,
// so that when the client sends it back Relay restores the canonical part and the vendor
// adapter sends it only to the vendor that made it.
import type { ReasoningPart } from '../../../core/plugin-api/canonical.ts';

const PREFIX = 'relay1.';
/** Origin assumed for encrypted content that carries no envelope: OpenAI made it. */
export const NATIVE_ORIGIN = 'openai';

interface Envelope { o?: string; s?: string; e?: string }

/** The opaque string for `encrypted_content`, or undefined when the part has nothing opaque. */
export function sealReasoning(part: Pick<ReasoningPart, 'origin' | 'signature' | 'encrypted'>): string | undefined {
  if (part.signature === undefined && part.encrypted === undefined) return undefined;
  if (part.origin === NATIVE_ORIGIN && part.signature === undefined) return part.encrypted;
  const envelope: Envelope = { o: part.origin, s: part.signature, e: part.encrypted };
  return PREFIX + Buffer.from(JSON.stringify(envelope)).toString('base64url');
}

/** `encrypted_content` from a client -> the canonical fields it stands for. */
export function openReasoning(value: string): Pick<ReasoningPart, 'origin' | 'signature' | 'encrypted'> {
  if (value.startsWith(PREFIX)) {
    try {
      const envelope = JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64url').toString('utf8')) as Envelope;
      const out: Pick<ReasoningPart, 'origin' | 'signature' | 'encrypted'> = {};
      if (typeof envelope.o === 'string') out.origin = envelope.o;
      if (typeof envelope.s === 'string') out.signature = envelope.s;
      if (typeof envelope.e === 'string') out.encrypted = envelope.e;
      return out;
    } catch {
      // not ours after all: treat as the vendor's own
    }
  }
  return { origin: NATIVE_ORIGIN, encrypted: value };
}

/** The vendor that made sealed `encrypted_content`, or null when it is not in Relay's envelope. */
export function sealedReasoningOrigin(value: string): string | null {
  return value.startsWith(PREFIX) ? openReasoning(value).origin ?? null : null;
}
