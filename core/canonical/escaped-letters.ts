// A byte search for a member name or type (`"container"`, `item_reference`) finds it only as
// written plainly, while a JSON parser reads `\u0063ontainer` as the same name: a body holding
// such an escape is read in full. Escapes of other characters (`\u00e9`, Go's `\u003c`) are not.
const U00 = Buffer.from('u00');
const BACKSLASH = 0x5c;
const FOUR = 0x34;
const SEVEN = 0x37;

/**
 * Whether JSON text holds a \u escape of a character from U+0040 to U+007F (letters and `_` among
 * them). Searched by `u00`, not `\u00`: Node finds a short needle by memchr on its first byte, and
 * an agent's turn holds a backslash on every line of code (`\n`) but `u00` seldom: ~70 µs on a
 * 400 KB turn rather than ~115 µs (`\u` alone took ~110 µs).
 */
export function holdsEscapedLetter(raw: Buffer): boolean {
  for (let at = raw.indexOf(U00, 1); at !== -1; at = raw.indexOf(U00, at + 1)) {
    const digit = raw[at + 3];
    if (raw[at - 1] === BACKSLASH && digit !== undefined && digit >= FOUR && digit <= SEVEN) return true;
  }
  return false;
}
