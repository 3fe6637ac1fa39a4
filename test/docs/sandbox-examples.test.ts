import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { REPO } from '../helpers/project.js';
import { fakeHome, LINUX, RUNS_AS_ROOT } from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

/** The first ```json block after `heading` in a document of the repository. */
function jsonBlockAfter(doc: string, heading: string): { mcpServers: Record<string, unknown> } {
  const text = readFileSync(join(REPO, doc), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, `${doc} has no "${heading}"`).toBeGreaterThan(-1);
  const block = /```json\n([\s\S]*?)```/.exec(text.slice(at));
  expect(block, `${doc}: no JSON block after "${heading}"`).not.toBeNull();
  return JSON.parse(block![1]!);
}

/**
 * The sandbox examples of the README and docs/security.md, as written: the `fs` server (`npx -y` of the official
 * filesystem server) must start in its sandbox and write the workspace. It fetches the package from the npm
 * registry through the sandbox's proxy (the one network this machine and CI reach); the other entries name
 * commands that exist only as examples (`web-mcp`, `old-server`) and are left to fail.
 */
describe.runIf(LINUX)('the documented sandbox examples start as written', () => {
  it.each([
    ['README.md', '## Sandbox'],
    ['docs/security.md', '### Policy'],
  ])(
    '%s',
    async (doc, heading) => {
      const config = jsonBlockAfter(doc, heading);
      expect(config.mcpServers.fs).toMatchObject({ command: 'npx', sandbox: { profile: 'package-runner' } });
      const p = scope.project('tack-sandbox-docs-');
      const { home } = fakeHome(scope);
      p.env.HOME = home;
      writeFileSync(join(p.dir, 'tack.json'), JSON.stringify(config));
      const target = join(p.dir, 'hello.txt');
      const call = await tack(
        [
          'call',
          'mcp__fs__write_file',
          JSON.stringify({ path: target, content: 'written from the sandbox' }),
        ],
        { cwd: p.dir, env: p.env },
      );
      expect(call.stderr).not.toContain('did not start');
      expect(call.code).toBe(0);
      expect(existsSync(target) && readFileSync(target, 'utf8')).toBe('written from the sandbox');
      const servers = JSON.parse((await tack(['servers', '--json'], { cwd: p.dir, env: p.env })).stdout);
      const fs = servers.find((s: { name: string }) => s.name === 'fs');
      expect(fs.status).toBe('connected');
      expect(fs.sandbox).toMatchObject({
        state: 'enforced',
        profile: 'package-runner',
        guarantees: { noPrivateFiles: !RUNS_AS_ROOT, noNetwork: false },
      });
    },
    180_000,
  );
});
