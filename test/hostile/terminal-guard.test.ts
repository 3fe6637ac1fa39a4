import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/project.js';
import { tsSources } from '../helpers/sources.js';

/**
 * Issue 28, defect 7: one output layer, so that no command path can forget to make foreign text printable. Only
 * src/cli/output.ts (and the spinner it owns) writes to the process's streams, asks questions with readline or
 * spells an escape sequence; every other file of the CLI goes through it. The full-screen chat (src/tui) draws with
 * Ink, which owns the screen there (its text made printable by components.ts): it never writes to the streams
 * itself either, but may send Ink's stdout a constant sequence of its own (`/clear`).
 */
const LAYER = new Set(['src/cli/output.ts', 'src/cli/spinner.ts']);
const FORBIDDEN = [
  { pattern: /\bprocess\.(stdout|stderr)\b/, what: 'the process streams', tui: true },
  { pattern: /\bconsole\.[a-z]+\(/, what: 'console', tui: true },
  { pattern: /\bcreateInterface\(|node:readline/, what: 'readline', tui: true },
  { pattern: /\\u001b|\\x1b|\\u\{1b\}|\\033/i, what: 'an escape sequence', tui: false },
];

describe('the terminal', () => {
  it('is written to by the output layer alone (src/cli/output.ts)', () => {
    const files = [...tsSources(join(REPO, 'src', 'cli')), ...tsSources(join(REPO, 'src', 'tui'))];
    expect(files.length).toBeGreaterThan(20);
    const offenders = files
      .map((file) => ({ file, at: relative(REPO, file) }))
      .filter(({ at }) => !LAYER.has(at))
      .flatMap(({ file, at }) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, where: `${at}:${i + 1}` }))
          .filter(({ line }) => !/^\s*(\*|\/\*|\/\/)/.test(line))
          .flatMap(({ line, where }) =>
            FORBIDDEN.filter(
              ({ pattern, tui }) => (tui || where.startsWith('src/cli/')) && pattern.test(line),
            ).map(({ what }) => `${where}: ${what}: ${line.trim()}`),
          ),
      );
    expect(offenders).toEqual([]);
  });
});
