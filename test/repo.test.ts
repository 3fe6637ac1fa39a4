import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/project.js';

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
});
