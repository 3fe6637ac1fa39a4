import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/project.js';

/** Longer than a screen and a half: a function that size does several things (issue 30's limit). */
const MAX_FUNCTION_LINES = 150;

describe('the repository', () => {
  it('holds no unresolved merge conflict in any tracked text file', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    const conflicted: string[] = [];
    for (const file of files) {
      if (!/\.(ts|tsx|js|mjs|json|md|ya?ml|txt|css|html)$/.test(file) && !file.startsWith('.ci/')) continue;
      let text: string;
      try {
        text = readFileSync(join(REPO, file), 'utf8');
      } catch {
        continue; // deleted in the work tree
      }
      const line = text.split('\n').findIndex((l) => /^(<{7}|>{7})( |$)/.test(l));
      if (line >= 0) conflicted.push(`${file}:${line + 1}`);
    }
    expect(conflicted).toEqual([]);
  });

  it('sorts text in one fixed order: no localeCompare in src/ (it follows the machine locale; util/text-order.ts)', () => {
    const files = execFileSync('git', ['ls-files', '-z', 'src'], { cwd: REPO, encoding: 'utf8' })
      .split('\0')
      .filter((file) => /\.tsx?$/.test(file) && file !== 'src/util/text-order.ts');
    const offenders = files.filter((file) => {
      try {
        return /\.localeCompare\(/.test(readFileSync(join(REPO, file), 'utf8'));
      } catch {
        return false; // deleted in the work tree
      }
    });
    expect(offenders).toEqual([]);
  });

  it('tracks nothing under node_modules (a worktree link to a shared node_modules is easy to commit)', () => {
    const tracked = execFileSync('git', ['ls-files', 'node_modules'], { cwd: REPO, encoding: 'utf8' });
    expect(tracked).toBe('');
  });

  it('holds no function over 150 lines in the CLI, the console or the chat: each command, route and view is its own', () => {
    const files = execFileSync('git', ['ls-files', '-z', 'src/cli', 'src/console', 'src/tui'], {
      cwd: REPO,
      encoding: 'utf8',
    })
      .split('\0')
      .filter((file) => /\.tsx?$/.test(file));
    const long: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(REPO, file), 'utf8');
      } catch {
        continue; // deleted in the work tree
      }
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body) {
          const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
          const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
          if (end - start + 1 > MAX_FUNCTION_LINES)
            long.push(`${file}:${start + 1} (${end - start + 1} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });
});
