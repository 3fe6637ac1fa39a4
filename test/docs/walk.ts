import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/project.js';

/**
 * The docs' console blocks as a stranger reads them: every `$ ` line is a command, the lines under it (up to the
 * next `$ ` line) are what the docs say it prints. A block may be preceded by one `<!-- walk: ... -->` comment that
 * says how to run it where a plain run cannot show what the page shows:
 *   - `skip <reason>`: not run (the reason is required and shown in the test's list of skipped blocks);
 *   - `until <text>`: a command that keeps running (a server): stopped once its output holds the text;
 *   - `exit <n>`: every command of the block is expected to exit with n (a page showing a failure on purpose);
 *   - `exact-output no`: the shown output is an illustration (paths of another machine): only the exit code counts;
 *   - `in <folder>`: run in a copy of that folder of the repository (a project the page describes), made beside
 *     the clone's `dist/`, instead of the clone's root;
 *   - `trusted`: as in a project its reader has trusted (`tack trust`; TACK_TRUST_PROJECT=1 here).
 * Inside a shown line, `...` stands for any text (an id, a token, a path of another machine).
 */
export interface DocCommand {
  file: string;
  line: number;
  command: string;
  /** What the page shows under the command; `...` lines stand for lines left out. */
  shown: string[];
  until?: string;
  exit: number;
  compareOutput: boolean;
  /** The folder of the repository the commands run in; the clone's root when absent. */
  in?: string;
  trusted: boolean;
}

export interface SkippedBlock {
  file: string;
  line: number;
  reason: string;
}

const DIRECTIVE = /^<!-- walk: (skip|until|exit|exact-output|in|trusted) ?(.*?) -->$/;

export function docPages(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function docCommands(page: string): { commands: DocCommand[]; skipped: SkippedBlock[] } {
  const lines = readFileSync(join(REPO, page), 'utf8').split('\n');
  const commands: DocCommand[] = [];
  const skipped: SkippedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```console') continue;
    const options = {
      in: undefined as string | undefined,
      trusted: false,
      until: undefined as string | undefined,
      exit: 0,
      compareOutput: true,
      skip: undefined as string | undefined,
    };
    for (let back = i - 1; back >= 0 && lines[back]?.startsWith('<!-- walk:'); back--) {
      const match = DIRECTIVE.exec(lines[back] ?? '');
      if (!match) throw new Error(`${page}:${back + 1}: unknown walk directive ${lines[back]}`);
      const [, kind, value = ''] = match;
      if (kind === 'skip') {
        if (!value) throw new Error(`${page}:${back + 1}: a skipped block says why`);
        options.skip = value;
      } else if (kind === 'until') options.until = value;
      else if (kind === 'exit') options.exit = Number(value);
      else if (kind === 'in') options.in = value;
      else if (kind === 'trusted') options.trusted = true;
      else options.compareOutput = value !== 'no';
    }
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    if (options.skip) {
      skipped.push({ file: page, line: i + 1, reason: options.skip });
      i = end;
      continue;
    }
    if (!lines.slice(i + 1, end).some((line) => line.startsWith('$ ')))
      throw new Error(
        `${page}:${i + 1}: a console block without a \`$ \` command line (a block cut in two?)`,
      );
    let current: DocCommand | undefined;
    for (let j = i + 1; j < end; j++) {
      const text = lines[j] ?? '';
      if (text.startsWith('$ ')) {
        current = {
          file: page,
          line: j + 1,
          command: text.slice(2).trim(),
          shown: [],
          until: options.until,
          exit: options.exit,
          compareOutput: options.compareOutput,
          in: options.in,
          trusted: options.trusted,
        };
        commands.push(current);
      } else current?.shown.push(text);
    }
    i = end;
  }
  return { commands, skipped };
}

/** Widths, timings, scores and counts move from machine to machine; words, names and order must not. */
export function normalized(line: string): string {
  return line
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/\d+(\.\d+)?/g, '#');
}

/**
 * The shown lines that the output does not have, in order: each shown line (but `...` and blank ones) must match
 * a line of the output after the one the previous shown line matched.
 */
export function missingLines(shown: readonly string[], output: string): string[] {
  const got = output.split('\n').map(normalized);
  const missing: string[] = [];
  let at = 0;
  for (const line of shown) {
    const want = normalized(line);
    if (want === '' || want === '...') continue;
    const pattern = new RegExp(`^${want.split('...').map(escaped).join('.*')}$`);
    const found = got.findIndex((g, index) => index >= at && pattern.test(g));
    if (found === -1) missing.push(line);
    else at = found + 1;
  }
  return missing;
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
