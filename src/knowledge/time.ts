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
const DATETIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;

export function parseTimeValue(value: unknown): TimeValue | undefined {
  if (value === undefined || value === null) return undefined;
  const raw = typeof value === 'string' ? value.trim() : String(value);
  const date = DATE.exec(raw);
  if (date) {
    const [, y, m, d] = date.map(Number) as [number, number, number, number];
    const instant = Date.UTC(y, m - 1, d);
    // Date.UTC rolls 2026-02-30 over to March: a real calendar day round-trips.
    const valid = new Date(instant).getUTCDate() === d && m >= 1 && m <= 12;
    return valid ? { raw, form: 'date', instant } : { raw, form: 'invalid' };
  }
  const match = DATETIME.exec(raw);
  if (match) {
    const hasOffset = match[3] !== undefined;
    // Without an offset JavaScript would read local time; OKF time is UTC unless it says otherwise.
    const instant = Date.parse(hasOffset ? raw : `${raw}Z`);
    if (Number.isNaN(instant)) return { raw, form: 'invalid' };
    return { raw, form: hasOffset ? 'datetime' : 'datetime-without-offset', instant };
  }
  return { raw, form: 'invalid' };
}

/** `now` as an OKF datetime with an explicit offset, second precision (`2026-11-30T02:00:00Z`). */
export function okfNow(now: Date = new Date()): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
