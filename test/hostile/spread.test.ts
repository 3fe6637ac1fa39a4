import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { table } from '../../src/cli/output.js';
import { loadConfig } from '../../src/config/load.js';
import { REPO, tempProject } from '../helpers/project.js';
import { tsSources } from '../helpers/sources.js';

/** Calls that put every item of an array on the stack: a few hundred thousand items overflow it. */
const SPREAD_CALL =
  /\.(push|unshift)\(\.\.\.|Math\.(max|min)\((?:[^()]*,\s*)?\.\.\.|String\.from(CharCode|CodePoint)\(\.\.\./;

describe('lists an outsider sizes', () => {
  it('are never spread into a call anywhere in src/ (util/arrays.ts has pushAll, maxOf, minOf)', () => {
    const offenders = tsSources(join(REPO, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${file.slice(REPO.length + 1)}:${i + 1}` }))
        .filter(({ line }) => !/^\s*(\*|\/\*|\/\/)/.test(line))
        .filter(({ line }) => SPREAD_CALL.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });

  // 150,000 is past what a spread survives on Node 20 (about 125,000 arguments).
  it('150,000 servers print as a table', () => {
    const rows = Array.from({ length: 150_000 }, (_, i) => [`s${i}`, 'stdio', 'disabled']);
    const printed = table(['NAME', 'TRANSPORT', 'STATE'], rows);
    expect(printed.split('\n')).toHaveLength(150_001);
    expect(printed).toContain('s149999  stdio      disabled');
  });

  it('a config file with 150,000 problems is one error listing them', () => {
    using project = tempProject();
    const servers: Record<string, unknown> = {};
    for (let i = 0; i < 150_000; i++) servers[`s${i}`] = { command: 42 };
    project.write('tack.json', { mcpServers: servers });
    expect(() => loadConfig({ cwd: project.dir, env: project.env })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', details: expect.any(Array) }),
    );
  });
});
