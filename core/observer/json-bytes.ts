// JSON values written as UTF-8 straight into a Buffer, for the usage line (usage-line.ts): each
// function writes at `pos` and returns the offset after what it wrote. The caller makes sure the
// buffer has room (see the bounds below). They write exactly what JSON.stringify writes.

/** Text known to be ASCII (keys, punctuation, null, true, false) as bytes, copied with one set(). */
export const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');

export const NULL = ascii('null');
const TRUE = ascii('true');
const FALSE = ascii('false');

/** Longest string checked and copied character by character; longer ones go to JSON.stringify. */
const MAX_SCANNED = 256;

/** At most this many bytes for any number (`'' + n` is at most 24 characters) or literal. */
export const MAX_NUMBER_BYTES = 25;

/** At most this many bytes for a string of `length` UTF-16 units: `\u001f` is six bytes for one unit. */
export const maxStringBytes = (length: number): number => length * 6 + 2;

export function putBytes(buf: Buffer, pos: number, bytes: Uint8Array): number {
  buf.set(bytes, pos);
  return pos + bytes.length;
}

/** `s` as a JSON string: copied by hand while nothing in it needs escaping, else JSON.stringify's text. */
export function putString(buf: Buffer, pos: number, s: string): number {
  const n = s.length;
  if (n <= MAX_SCANNED) {
    buf[pos] = 0x22;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      // Control characters, `"` and `\` are escaped; beyond ASCII, lone surrogates are.
      if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) break;
      buf[pos + 1 + i] = c;
    }
    if (i === n) {
      buf[pos + 1 + n] = 0x22;
      return pos + n + 2;
    }
  }
  return pos + buf.write(JSON.stringify(s), pos, 'utf8');
}

export function putNullableString(buf: Buffer, pos: number, s: string | null): number {
  return s === null ? putBytes(buf, pos, NULL) : putString(buf, pos, s);
}

export function putBoolean(buf: Buffer, pos: number, b: boolean): number {
  return putBytes(buf, pos, b ? TRUE : FALSE);
}

/** The decimal digits of an integer 0 <= n < 1e15 (every such integer is exact in a double). */
function putDigits(buf: Buffer, pos: number, n: number): number {
  let end = pos + 1;
  for (let power = 10; power <= n; power *= 10) end++;
  for (let i = end - 1; i >= pos; i--) {
    const rest = Math.floor(n / 10);
    buf[i] = 0x30 + n - rest * 10;
    n = rest;
  }
  return end;
}

/** ASCII text that needs no escaping (a number's text). */
function putText(buf: Buffer, pos: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[pos + i] = text.charCodeAt(i);
  return pos + text.length;
}

/**
 * A number as JSON writes it: as String(n), NaN and the infinities as null. An integer and a time
 * in milliseconds rounded to three decimals are written from their digits (String(n) on a fraction
 * took 0.16 us).
 */
export function putNumber(buf: Buffer, pos: number, n: number | null): number {
  if (n === null) return putBytes(buf, pos, NULL);
  if (n >= 0 && n < 1e12) {
    if (Number.isInteger(n)) return putDigits(buf, pos, n);
    const thousandths = Math.round(n * 1000);
    if (thousandths / 1000 === n) {
      // n is the double nearest k/1000 (k < 1e15): a decimal of at most 15 significant digits
      // is the shortest text that reads back as that double, so String(n) writes k/1000.
      const whole = Math.floor(thousandths / 1000);
      let fraction = thousandths - whole * 1000;
      let digits = 3;
      while (fraction % 10 === 0) {
        fraction /= 10;
        digits--;
      }
      pos = putDigits(buf, pos, whole);
      buf[pos++] = 0x2e; // .
      for (let width = fraction < 10 ? 1 : fraction < 100 ? 2 : 3; width < digits; width++) buf[pos++] = 0x30;
      return putDigits(buf, pos, fraction);
    }
  }
  return putText(buf, pos, Number.isFinite(n) ? '' + n : 'null');
}
