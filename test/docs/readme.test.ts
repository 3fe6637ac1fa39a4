import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { providerEnv } from '../helpers/fake-provider.js';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

/** Commands the README shows failing on purpose, with the exit code they show. */
const EXPECTED_EXIT: Array<[RegExp, number]> = [
  [/^tack skills validate test\/fixtures\/skills\/invalid\//, 1],
];

/** Every `$ ` line of the README's console blocks, in order. */
function readmeCommands(): string[] {
  const text = readFileSync(join(REPO, 'README.md'), 'utf8');
  return [...text.matchAll(/^```console\n([\s\S]*?)^```$/gm)].flatMap((block) =>
    block[1]!
      .split('\n')
      .filter((line) => line.startsWith('$ '))
      .map((line) => line.slice(2).trim()),
  );
}

const { fake, project } = testScope();

/**
 * The README as a stranger reads it: every command of its console blocks, as written, through a `tack` on the
 * PATH, from a folder laid out like a clone (the repository's folders linked in, so files a command writes stay
 * out of the repository). Each must exit as the README shows. `export` lines set what the fake model needs.
 */
describe('README', () => {
  it('every documented command runs as written', async () => {
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThan(10);
    const p = project('tack-readme-');
    const clone = join(p.dir, 'clone');
    mkdirSync(clone);
    for (const entry of ['bin', 'dist', 'docs', 'examples', 'node_modules', 'schema', 'test', 'package.json'])
      symlinkSync(join(REPO, entry), join(clone, entry));
    const shims = join(p.dir, 'bin');
    mkdirSync(shims);
    writeFileSync(join(shims, 'tack'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(shims, 'tack'), 0o755);
    const provider = await fake(() => ({ text: 'It is 16 °C and sunny in Lisbon.' }));
    const env = {
      ...p.env,
      ...providerEnv(provider),
      PATH: `${shims}:${process.env.PATH}`,
      TACK_TRUST_PROJECT: undefined,
    };
    const failures: string[] = [];
    for (const command of commands) {
      if (command.startsWith('export ')) continue;
      const expected = EXPECTED_EXIT.find(([pattern]) => pattern.test(command))?.[1] ?? 0;
      const code = await new Promise<number>((resolve) =>
        execFile('sh', ['-c', command], { cwd: clone, env, timeout: 60_000 }, (error, _stdout, stderr) => {
          const got = error ? ((error as { code?: number }).code ?? 1) : 0;
          if (got !== expected)
            failures.push(`${command}: exit ${got}, expected ${expected}\n${stderr.slice(0, 500)}`);
          resolve(got);
        }),
      );
      expect(typeof code).toBe('number');
    }
    expect(failures).toEqual([]);
  }, 240_000);
});
