// The Gregorian calendar, for checking dates written as text: Date rolls a day that does not
// exist over (30 February is 2 March) instead of refusing it.
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in `month` (1-12) of `year`; 0 for a month that does not exist. */
export function daysInMonth(year: number, month: number): number {
  if (month < 1 || month > 12) return 0;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}
