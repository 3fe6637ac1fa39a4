import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { BIN, tack } from '../helpers/cli.js';
import { REPO, tempProject } from '../helpers/project.js';

const VALID = join(REPO, 'examples', 'skills', 'team');

/** A billion laughs in a SKILL.md: eight levels of nine aliases each, 9^8 strings if expanded. */
const BOMB = [
  '---',
  'name: bomb',
  'description: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  ...'bcdefgh'
    .split('')
    .map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(', ')}]`),
  '---',
  '# Bomb',
  '',
].join('\n');

/** A project whose `skills` folder holds the bomb next to an honest skill, plus the valid fixtures. */
function project() {
  const p = tempProject();
  const folder = join(p.dir, 'skills');
  mkdirSync(join(folder, 'bomb'), { recursive: true });
  writeFileSync(join(folder, 'bomb', 'SKILL.md'), BOMB);
  mkdirSync(join(folder, 'honest'), { recursive: true });
  writeFileSync(
    join(folder, 'honest', 'SKILL.md'),
    '---\nname: honest\ndescription: An honest skill. Use when testing hostile neighbours.\n---\n# Honest\n',
  );
  p.write('tack.json', { skills: ['skills', VALID] });
  return { p, env: { ...p.env, HOME: p.home }, bombFile: join(folder, 'bomb', 'SKILL.md') };
}

describe('a SKILL.md with a YAML alias bomb', () => {
  it('is one invalid skill (file and line) for every skills command; the others load', async () => {
    const { p, env, bombFile } = project();
    using _ = p;
    const list = await tack(['skills', 'list', '--json'], { cwd: p.dir, env });
    expect(list.stderr).not.toMatch(/unexpected failure|ReferenceError/);
    expect(list.code).toBe(0);
    const rows = (
      JSON.parse(list.stdout) as { skills: Array<{ name: string; valid: boolean; reasons: string[] }> }
    ).skills;
    const valid = rows.filter((s) => s.valid).map((s) => s.name);
    expect(valid).toContain('honest');
    expect(valid).toContain('commit-message');
    expect(valid).not.toContain('bomb');
    // Listed as invalid, with the reason, never offered.
    expect(rows.find((s) => s.name === 'bomb')).toMatchObject({
      valid: false,
      reasons: [expect.stringMatching(/alias/)],
    });

    const index = await tack(['skills', 'index'], { cwd: p.dir, env });
    expect(index.code).toBe(0);
    expect(index.stdout).toContain('honest');

    // The alias line is line 4 of the file: the first `*a`.
    const validate = await tack(['skills', 'validate', join(p.dir, 'skills')], { cwd: REPO, env });
    expect(validate.code).toBe(1);
    expect(validate.stdout).toContain(`${bombFile}:4: error: SKILL.md the front matter cannot be read`);
    expect(validate.stdout).toMatch(/alias/);
    expect(validate.stdout).toMatch(/2 skills checked: 1 error/);

    const context = await tack(['context', '--json'], { cwd: p.dir, env });
    expect(context.stderr).not.toMatch(/unexpected failure|ReferenceError/);
    expect(context.code).toBe(0);
    const parts = (JSON.parse(context.stdout) as { parts: Array<{ part: string; tokens: number }> }).parts;
    expect(parts.find((part) => part.part === 'system: skills index')?.tokens).toBeGreaterThan(0);
  }, 60_000); // CLI runs over a hostile library: 6 s on CI, 25 s under heavy load

  it('tack serve-skills serves the other skills', async () => {
    const { p, env } = project();
    using _ = p;
    const client = new Client({ name: 'hostile-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve-skills'],
        cwd: p.dir,
        env: env as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      const read = await client.callTool({ name: 'activate_skill', arguments: { name: 'honest' } });
      expect(JSON.stringify(read.content)).toContain('# Honest');
      const bomb = await client.callTool({ name: 'activate_skill', arguments: { name: 'bomb' } });
      expect(bomb.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
