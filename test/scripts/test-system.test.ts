import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/project.js';

/**
 * `npm test` starts with scripts/test-system.mjs (issue 29): what the suite runs for real is found, installed, or
 * named with the command that installs it, before the half-hour run rather than at its first failure.
 */
const SCRIPT = join(REPO, 'scripts', 'test-system.mjs');

describe('npm test on a machine without what the suite runs', () => {
  it('names what is missing and the one command that installs it, and does not start the suite', () => {
    // An empty PATH: the programs looked up on it are missing, and apt-get is not there to install them.
    const run = spawnSync(process.execPath, [SCRIPT], { env: { PATH: '' }, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^test system: .*bubblewrap, Chromium, the sqlite3 shell missing/);
    expect(run.stderr).toContain('sudo apt-get install -y');
    expect(run.stderr).toMatch(/bubblewrap chromium sqlite3/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('says in one line that everything is there when it is', () => {
    const run = spawnSync(process.execPath, [SCRIPT], { env: process.env, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /^test system: PostgreSQL, nginx, bubblewrap, Chromium, the sqlite3 shell found/,
    );
  });
});
