import { TackError } from '../errors.js';
import { maxOf } from '../util/arrays.js';

/** Writes to stdout; data goes to stdout, everything about the run (spinner, warnings, errors) to stderr. */
export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
}

/** A listing: the rows as JSON with --json, else `render()` (or `empty` when there is nothing). Exit code 0. */
export function printListing(
  options: { json?: boolean },
  rows: readonly unknown[],
  empty: string,
  render: () => string,
): number {
  if (options.json) printJson(rows);
  else print(rows.length === 0 ? empty : render());
  return 0;
}

export function warn(text: string): void {
  process.stderr.write(`warning: ${text}\n`);
}

/**
 * A plain aligned table. Hand-written: the table libraries draw borders and wrap cells, and tack's listings
 * must stay greppable one row per line.
 */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = headers.map((header, i) =>
    maxOf(
      rows.map((row) => (row[i] ?? '').length),
      header.length,
    ),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function truncate(text: string, max: number): string {
  const oneLine = text.split('\n')[0]!.trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** One readable line, the hint, any details; returns the exit code (2 usage and config, 130 interrupted, else 1). */
export function reportError(error: unknown): number {
  if (TackError.isInstance(error)) {
    process.stderr.write(`error: ${error.message}\n`);
    for (const line of error.details) process.stderr.write(`  ${line}\n`);
    if (error.hint) process.stderr.write(`hint: ${error.hint}\n`);
    if (error.code === 'REQUEST_ABORTED') return 130; // the shell's convention for Ctrl-C
    return error.code === 'USAGE' ||
      error.code === 'UNKNOWN_SERVER' ||
      error.code === 'MODEL_UNAVAILABLE' ||
      error.code.startsWith('CONFIG_')
      ? 2
      : 1;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`error: unexpected failure: ${message}\n`);
  return 1;
}
