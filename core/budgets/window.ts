// The window a budget counts in at a given time: daily, weekly (from Monday) and monthly windows
// start at local midnight in the budget's time zone (DST included); a rolling window is the last N
// days and a lifetime one everything, neither with a reset.
import type { BudgetSpec } from '../catalog/kinds.ts';

export interface BudgetWindowAt {
  startMs: number;
  /** When the window resets; null for rolling and lifetime windows. */
  resetsAtMs: number | null;
}

const DAY_MS = 86_400_000;

interface LocalDate { year: number; month: number; day: number; weekday: number }

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', weekday: 'short' });
    formatters.set(timeZone, f);
  }
  return f;
}

const WEEKDAYS: Record<string, number> = { Mon: 0, Tue: 1, Wed: 2, Thu: 3, Fri: 4, Sat: 5, Sun: 6 };

/** The wall-clock time in the zone, read as if it were UTC, and the local date. */
function local(ms: number, timeZone: string): { wallMs: number; date: LocalDate } {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(ms)) parts[p.type] = p.value;
  const date = { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), weekday: WEEKDAYS[parts.weekday!] ?? 0 };
  const wallMs = Date.UTC(date.year, date.month - 1, date.day, Number(parts.hour), Number(parts.minute), Number(parts.second));
  return { wallMs, date };
}

/** A local date as the UTC instant of the same calendar date, so that two dates compare as numbers. */
const dateKey = (d: LocalDate): number => Date.UTC(d.year, d.month - 1, d.day);

/**
 * The first instant of a local date: its midnight (the zone's offset found by two passes, for DST),
 * or, where the clocks skip midnight (DST beginning at 00:00, as in Chile, Cuba or Paraguay), the
 * instant they jump to. Two passes land such a midnight an hour early, on the day before, and a
 * window ending there would reset at every request for that hour.
 */
function midnight(year: number, month: number, day: number, timeZone: string): number {
  const wall = Date.UTC(year, month - 1, day);
  let guess = wall;
  for (let i = 0; i < 2; i++) guess = wall - (local(guess, timeZone).wallMs - guess);
  if (dateKey(local(guess, timeZone).date) >= wall) return guess;
  // In the gap: the first second whose local date is this one (or later, for a date the zone skipped).
  let before = guess;
  let inDay = guess + DAY_MS;
  while (inDay - before > 1000) {
    const mid = before + Math.floor((inDay - before) / 2000) * 1000;
    if (dateKey(local(mid, timeZone).date) >= wall) inDay = mid;
    else before = mid;
  }
  return inDay;
}

export function windowAt(spec: Pick<BudgetSpec, 'window' | 'timezone'>, nowMs: number): BudgetWindowAt {
  const w = spec.window;
  if (w === 'lifetime') return { startMs: 0, resetsAtMs: null };
  if (typeof w === 'object') return { startMs: nowMs - w.rollingDays * DAY_MS, resetsAtMs: null };
  const tz = spec.timezone;
  const { date } = local(nowMs, tz);
  if (w === 'daily') {
    const next = new Date(Date.UTC(date.year, date.month - 1, date.day + 1));
    return { startMs: midnight(date.year, date.month, date.day, tz), resetsAtMs: midnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), tz) };
  }
  if (w === 'weekly') {
    const monday = new Date(Date.UTC(date.year, date.month - 1, date.day - date.weekday));
    const nextMonday = new Date(monday.getTime() + 7 * DAY_MS);
    return {
      startMs: midnight(monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate(), tz),
      resetsAtMs: midnight(nextMonday.getUTCFullYear(), nextMonday.getUTCMonth() + 1, nextMonday.getUTCDate(), tz),
    };
  }
  const nextMonth = new Date(Date.UTC(date.year, date.month, 1));
  return { startMs: midnight(date.year, date.month, 1, tz), resetsAtMs: midnight(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1, tz) };
}
