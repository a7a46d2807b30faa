// Anthropic clients hand thinking blocks back with their `signature` unchanged. Reasoning
// made by another vendor (an OpenAI encrypted_content) is sealed into the signature in an
// envelope naming its origin, so that when the client sends the block back Relay restores
// the canonical part and the vendor adapter sends it only to the vendor that made it.
// Anthropic's own signatures pass unchanged.
import type { ReasoningPart } from '../../../core/plugin-api/canonical.ts';

const PREFIX = 'relay1.';
/** Origin assumed for a signature without an envelope: Anthropic made it. */
export const NATIVE_ORIGIN = 'anthropic';

type Opaque = Pick<ReasoningPart, 'origin' | 'signature' | 'encrypted'>;
interface Envelope { o?: string; s?: string; e?: string }

/** The `signature` of a thinking block, or undefined when the part carries nothing opaque. */
export function sealSignature(part: Opaque): string | undefined {
  if (part.signature === undefined && part.encrypted === undefined) return undefined;
  if (part.origin === NATIVE_ORIGIN && part.encrypted === undefined) return part.signature;
  const envelope: Envelope = { o: part.origin, s: part.signature, e: part.encrypted };
  return PREFIX + Buffer.from(JSON.stringify(envelope)).toString('base64url');
}

/** A thinking block's signature from a client -> the canonical fields it stands for. */
export function openSignature(signature: string): Opaque {
  if (signature.startsWith(PREFIX)) {
    try {
      const envelope = JSON.parse(Buffer.from(signature.slice(PREFIX.length), 'base64url').toString('utf8')) as Envelope;
      const out: Opaque = {};
      if (typeof envelope.o === 'string') out.origin = envelope.o;
      if (typeof envelope.s === 'string') out.signature = envelope.s;
      if (typeof envelope.e === 'string') out.encrypted = envelope.e;
      return out;
    } catch {
      // not ours after all: treat as Anthropic's own
    }
  }
  return { origin: NATIVE_ORIGIN, signature };
}

/** Anthropic's own encrypted thinking (no text) is a redacted_thinking block. */
export function isRedactedThinking(part: Opaque & { text?: string }): boolean {
  return part.origin === NATIVE_ORIGIN && part.encrypted !== undefined && part.signature === undefined && !part.text;
}

/** The vendor that made a thinking block sealed in `signature`, or null when it is not Relay's envelope. */
export function sealedSignatureOrigin(signature: string): string | null {
  return signature.startsWith(PREFIX) ? openSignature(signature).origin ?? null : null;
}
