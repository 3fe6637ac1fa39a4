import { createInterface } from 'node:readline/promises';
import { TackError } from '../errors.js';
import { maxOf } from '../util/arrays.js';
import { printable, printableJson } from '../util/printable.js';

/*
 * The one way the CLI writes to the terminal. Every string given to this module is made printable
 * (util/printable.ts: controls removed, bidi and invisible characters shown) on its way out, whoever wrote it: a
 * server, a model, a gateway client, a file, or tack. An escape sequence reaches the terminal only from here: the
 * colours of `style` (on a terminal that takes them), the spinner (spinner.ts) and readline's line editing.
 * test/hostile/terminal-guard.test.ts fails when another file under src/cli writes to process.stdout or
 * process.stderr itself; test/hostile/terminal-text.test.ts runs every command against a hostile server.
 * Data goes to stdout, everything about the run (spinner, warnings, errors, questions) to stderr.
 */

type Stream = 'stdout' | 'stderr';

/** SGR codes (on, off) of tack's own styles: the only ones the CLI writes. */
const SGR = { bold: [1, 22], red: [31, 39], yellow: [33, 39] } as const;

/** Text tack styles itself. Made only by `style`, so no other string can carry an escape sequence in. */
class Styled {
  constructor(
    readonly text: string,
    readonly sgr: readonly [number, number],
  ) {}
}

export type { Styled };

/** What the writers take: text (made printable) and tack's own styled text (made printable, then styled). */
export type Part = string | Styled;

export const style = {
  bold: (text: string): Styled => new Styled(text, SGR.bold),
  red: (text: string): Styled => new Styled(text, SGR.red),
  yellow: (text: string): Styled => new Styled(text, SGR.yellow),
};

/**
 * Whether `stream` gets colours: FORCE_COLOR (not 0 or false) forces them even into a pipe; else NO_COLOR
 * (https://no-color.org), a pipe or TERM=dumb turns them off.
 */
function colours(stream: Stream): boolean {
  const force = process.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (process.env.NO_COLOR) return false;
  return process[stream].isTTY === true && process.env.TERM !== 'dumb';
}

/** Tabs are harmless on a terminal and part of some text (a diff's header, a Makefile): kept. */
const shown = (text: string) => printable(text, { keepTabs: true });

function render(stream: Stream, parts: readonly Part[]): string {
  const coloured = parts.some((part) => typeof part !== 'string') && colours(stream);
  let text = '';
  for (const part of parts) {
    if (typeof part === 'string') text += shown(part);
    else if (coloured) text += `\u001b[${part.sgr[0]}m${shown(part.text)}\u001b[${part.sgr[1]}m`;
    else text += shown(part.text);
  }
  return text;
}

function emit(stream: Stream, parts: readonly Part[], line: boolean): void {
  const text = render(stream, parts);
  process[stream].write(line && !text.endsWith('\n') ? `${text}\n` : text);
}

/** A line on stdout (the new line added unless it ends with one). */
export function print(...parts: Part[]): void {
  emit('stdout', parts, true);
}

/** Text on stdout as it is, without a new line (an answer as it streams). */
export function write(...parts: Part[]): void {
  emit('stdout', parts, false);
}

/** A line on stderr: what happens during the run, not its data. */
export function printErr(...parts: Part[]): void {
  emit('stderr', parts, true);
}

/** Text on stderr as it is, without a new line. */
export function writeErr(...parts: Part[]): void {
  emit('stderr', parts, false);
}

/**
 * JSON on stdout: data, not words for the terminal, but it may be read on one. `JSON.stringify` escapes C0
 * controls and leaves C1, DEL, bidi and invisible characters raw: those are escaped too (the same value to a
 * parser).
 */
export function printJson(value: unknown): void {
  print(printableJson(value, 2));
}

/** One JSON value on a line of its own (JSONL: `tack run --json` events, exports). */
export function printJsonLine(value: unknown): void {
  print(printableJson(value));
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
  printErr(style.yellow('warning:'), ` ${text}`);
}

/** Whether `stream` is a terminal (not a pipe or a file). */
export function isTerminal(stream: Stream): boolean {
  return process[stream].isTTY === true;
}

/** `tack tools | head` closes stdout early: that is the reader's choice, not an error worth a stack trace. */
export function exitWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** Commander's help, version and usage errors, through this module like everything else. */
export const commanderOutput = {
  writeOut: (text: string) => write(text),
  writeErr: (text: string) => writeErr(text),
};

/**
 * A plain aligned table. Hand-written: the table libraries draw borders and wrap cells, and tack's listings
 * must stay greppable one row per line: each cell is made printable and one line before it is measured.
 */
export function table(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const cells = rows.map((row) => row.map((cell) => printable(cell).replace(/\r?\n/g, ' ')));
  const widths = headers.map((header, i) =>
    maxOf(
      cells.map((row) => (row[i] ?? '').length),
      header.length,
    ),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** The first line of `text` (made printable), cut to `max` characters. */
export function truncate(text: string, max: number): string {
  const oneLine = printable(text).split('\n')[0]!.trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/**
 * Questions on stderr, answers from stdin, one readline for as long as it is open; in a terminal readline edits
 * the line itself. A question is made printable like everything else (it may quote a server's words).
 */
export interface Questions {
  ask(question: string): Promise<string>;
  /** Ctrl-C while a question waits (in a terminal readline takes it, instead of the process). */
  onInterrupt(handler: () => void): void;
  /** stdin closed. */
  onClose(handler: () => void): void;
  close(): void;
}

export function questions(options: { terminal?: boolean } = {}): Questions {
  const rl = createInterface({
    input: process.stdin,
    output: process.stderr,
    ...(options.terminal !== undefined ? { terminal: options.terminal } : {}),
  });
  return {
    ask: (question) => rl.question(shown(question)),
    onInterrupt: (handler) => {
      rl.on('SIGINT', handler);
    },
    onClose: (handler) => {
      rl.once('close', handler);
    },
    close: () => rl.close(),
  };
}

/**
 * The lines of stdin when it is not a terminal (a pipe, a file): read as they come and kept until asked for, so a
 * line that arrives while the caller is busy (a turn running) is not lost; undefined at the end of input.
 */
export interface InputLines {
  next(): Promise<string | undefined>;
  close(): void;
}

export function inputLines(): InputLines {
  const rl = createInterface({ input: process.stdin, terminal: false, crlfDelay: Number.POSITIVE_INFINITY });
  const lines = rl[Symbol.asyncIterator]();
  return {
    next: async () => {
      const line = await lines.next();
      return line.done ? undefined : line.value;
    },
    close: () => rl.close(),
  };
}

/** One readable line, the hint, any details; returns the exit code (2 usage and config, 130 interrupted, else 1). */
export function reportError(error: unknown): number {
  if (TackError.isInstance(error)) {
    printErr(style.red('error:'), ` ${error.message}`);
    for (const line of error.details) printErr(`  ${line}`);
    if (error.hint) printErr(`hint: ${error.hint}`);
    if (error.code === 'REQUEST_ABORTED') return 130; // the shell's convention for Ctrl-C
    return error.code === 'USAGE' ||
      error.code === 'UNKNOWN_SERVER' ||
      error.code === 'MODEL_UNAVAILABLE' ||
      error.code.startsWith('CONFIG_')
      ? 2
      : 1;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  printErr(style.red('error:'), ` unexpected failure: ${message}`);
  return 1;
}
