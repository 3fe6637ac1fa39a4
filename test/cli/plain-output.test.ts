import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const BOLD = '\u001b[1m';

/**
 * Runs scripts/demo.sh with a `node` that does nothing, so only the demo's own step lines are printed; `tty`
 * runs it in a pseudo-terminal (`script`), as `npm run demo` in a shell would.
 */
function demo(env: Record<string, string | undefined>, tty: boolean): Promise<string> {
  const p = scope.project('tack-demo-');
  const bin = join(p.dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'node'), '#!/bin/sh\nexit 0\n');
  chmodSync(join(bin, 'node'), 0o755);
  const demoScript = join(REPO, 'scripts', 'demo.sh');
  const [file, args] = tty ? ['script', ['-qfec', `sh '${demoScript}'`, '/dev/null']] : ['sh', [demoScript]];
  const base = { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined };
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args as string[],
      { cwd: p.dir, env: { ...base, ...env, PATH: `${bin}:${process.env.PATH}` } },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

describe('npm run demo', () => {
  it('writes no escape codes into a file or a pipe', async () => {
    const out = await demo({}, false);
    expect(out).toContain('$ tack servers');
    expect(out).not.toContain('\u001b');
  });

  it('is bold on a terminal, but not with NO_COLOR; FORCE_COLOR forces it into a pipe', async () => {
    expect(await demo({}, true)).toContain(`${BOLD}$ tack servers`);
    expect(await demo({ NO_COLOR: '1' }, true)).not.toContain('\u001b');
    expect(await demo({ FORCE_COLOR: '1' }, false)).toContain(`${BOLD}$ tack servers`);
    expect(await demo({ FORCE_COLOR: '0' }, true)).not.toContain('\u001b');
  });
});
