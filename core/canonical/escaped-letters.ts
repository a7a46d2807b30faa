// A byte search for a member name or type (`"container"`, `item_reference`) finds it only as
// written plainly, while a JSON parser reads `\u0063ontainer` as the same name: a body holding
// such an escape is read in full. Escapes of other characters (`\u00e9`, Go's `\u003c`) are not.
const ESCAPE = Buffer.from('\\u00');
const FOUR = 0x34;
const SEVEN = 0x37;

/** Whether JSON text holds a \u escape of a character from U+0040 to U+007F (letters and `_` among them). */
export function holdsEscapedLetter(raw: Buffer): boolean {
  for (let at = raw.indexOf(ESCAPE); at !== -1; at = raw.indexOf(ESCAPE, at + 1)) {
    const digit = raw[at + 4];
    if (digit !== undefined && digit >= FOUR && digit <= SEVEN) return true;
  }
  return false;
}
