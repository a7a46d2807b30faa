// Relay's sealed envelopes (another vendor's reasoning or search, kept in a client's history) all
// hold `relay1.`; a passthrough body is searched for it on every agent turn before it is forwarded.
export const ENVELOPE_MARK = 'relay1.';

const Y1 = 'y1.';
const RELA = [0x72, 0x65, 0x6c, 0x61];

/**
 * Whether `raw` holds the mark. Node searches a needle of 7 bytes or more with Boyer-Moore-Horspool
 * and a shorter one with memchr on its first byte: looking for the rare `y1.` and checking the four
 * bytes before it is ~10x faster on a 400 KB agent turn than looking for `relay1.` (RESULTS.md).
 */
export function holdsEnvelope(raw: Buffer | string): boolean {
  if (typeof raw === 'string') return raw.includes(ENVELOPE_MARK);
  for (let at = raw.indexOf(Y1, 4); at !== -1; at = raw.indexOf(Y1, at + 1)) {
    if (raw[at - 4] === RELA[0] && raw[at - 3] === RELA[1] && raw[at - 2] === RELA[2] && raw[at - 1] === RELA[3]) return true;
  }
  return false;
}
