// Money is counted in integer micro-units (a millionth of the currency): a sum of decimal
// fractions as doubles shows float noise (0.1 + 0.2), a sum of integers below 2^53 is exact.

export const MICROS_PER_UNIT = 1_000_000;

/** An amount in the currency as whole micro-units. */
export const toMicros = (amount: number): number => Math.round(amount * MICROS_PER_UNIT);

/** Whole micro-units as an amount in the currency (the double nearest the decimal). */
export const fromMicros = (micros: number): number => micros / MICROS_PER_UNIT;

/** a + b, both amounts in the currency, added as micro-units. */
export const addMoney = (a: number, b: number): number => fromMicros(toMicros(a) + toMicros(b));
