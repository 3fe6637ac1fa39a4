/**
 * OKF time values (`generated.at`, `verified[].at`, `stale_after`, `sources[].last_modified`, `usage_window`).
 * v0.2 was revised in place: bundles written before 2026-08-20 carry bare dates (`2026-09-01`), later ones ISO
 * 8601 datetimes with an explicit offset. Both are read; the value stays the string as written (round-trips and
 * output show it unchanged) and `form` says which it was, so a reader can tell a day from an instant.
 */
export type TimeForm = 'date' | 'datetime' | 'datetime-without-offset' | 'invalid';

export interface TimeValue {
  /** Exactly as written (a YAML scalar read as a string; numbers and the like are stringified). */
  raw: string;
  form: TimeForm;
  /** Milliseconds since the epoch; a bare date is its day's start in UTC. Absent when `form` is invalid. */
  instant?: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?$/;

/** Whether year-month-day is a day of the (proleptic Gregorian) calendar: 2026-02-30 is not. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** Date.UTC without its two-digit-year rule (it reads year 50 as 1950). */
function utc(year: number, month: number, day: number, h = 0, m = 0, s = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(h, m, s, ms);
  return date.getTime();
}

export function parseTimeValue(value: unknown): TimeValue | undefined {
  if (value === undefined || value === null) return undefined;
  // An explicit `!!timestamp` tag is the one way the core schema yields a Date; its text is gone, its instant not.
  if (value instanceof Date)
    return Number.isNaN(value.getTime())
      ? { raw: String(value), form: 'invalid' }
      : { raw: okfNow(value), form: 'datetime', instant: value.getTime() };
  const raw = typeof value === 'string' ? value.trim() : String(value);
  const date = DATE.exec(raw);
  if (date) {
    const [y, m, d] = date.slice(1).map(Number) as [number, number, number];
    return isCalendarDate(y, m, d) ? { raw, form: 'date', instant: utc(y, m, d) } : { raw, form: 'invalid' };
  }
  const match = DATETIME.exec(raw);
  if (!match) return { raw, form: 'invalid' };
  const [y, mo, d, h, mi, s] = match.slice(1, 7).map((v) => Number(v ?? 0)) as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [oh, om] = [Number(match[10] ?? 0), Number(match[11] ?? 0)];
  // Checked field by field: Date.parse would roll 2026-02-30 over into March and accept 24:00.
  if (!isCalendarDate(y, mo, d) || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59)
    return { raw, form: 'invalid' };
  const ms = Number((match[7] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = (match[9] === '-' ? -1 : 1) * (oh * 60 + om);
  // Without an offset the time is read as UTC (JavaScript would read local time): OKF time is UTC unless it says.
  return {
    raw,
    form: match[8] === undefined ? 'datetime-without-offset' : 'datetime',
    instant: utc(y, mo, d, h, mi, s, ms) - offset * 60_000,
  };
}

/** `now` as an OKF datetime with an explicit offset, second precision (`2026-11-30T02:00:00Z`). */
export function okfNow(now: Date = new Date()): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
