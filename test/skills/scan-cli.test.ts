import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { REPO, tempProject } from '../helpers/project.js';

const POISONED = join(REPO, 'test', 'fixtures', 'skills', 'poisoned');
const BENIGN = join(REPO, 'test', 'fixtures', 'skills', 'poisoned-benign');
const REAL = join(REPO, 'examples', 'skills', 'anthropics');

describe('the skill scan in the CLI', () => {
  it('tack skills validate lists the findings with file and line, and fails on a blocking one', async () => {
    using p = tempProject();
    const bad = await tack(['skills', 'validate', join(POISONED, 'curl-pipe')], { cwd: p.dir, env: p.env });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(
      `${join(POISONED, 'curl-pipe', 'SKILL.md')}:11: error: poisoning scan: fetch-exec: downloads code and pipes it into an interpreter`,
    );
    const good = await tack(['skills', 'validate', BENIGN], { cwd: p.dir, env: p.env });
    expect(good.code).toBe(0);
    expect(good.stdout).not.toContain('poisoning scan');
  });

  it('tack scan scans the skills with the servers: a blocked skill fails it, the real ones are clean', async () => {
    using p = tempProject();
    mkdirSync(p.home, { recursive: true });
    writeFileSync(join(p.home, 'config.json'), JSON.stringify({ skills: [POISONED, REAL] }));
    const run = await tack(['scan', '--json'], { cwd: p.dir, env: { ...p.env, HOME: p.home } });
    expect(run.code).toBe(1);
    const out = JSON.parse(run.stdout) as {
      skills: Array<{ name: string; verdict: string; findings: Array<{ code: string; line: number }> }>;
      skillModel: { thresholds: { warn: number; block: number } };
    };
    const verdict = (name: string) => out.skills.find((s) => s.name === name)?.verdict;
    expect(verdict('curl-pipe')).toBe('block');
    expect(verdict('skill-creator')).toBe('clean');
    expect(out.skills.filter((s) => s.verdict === 'block')).toHaveLength(10);
    expect(verdict('https-installer')).toBe('warn');
    expect(out.skills.filter((s) => s.verdict === 'clean')).toHaveLength(8);
    expect(out.skillModel.thresholds).toMatchObject({ warn: 2, block: 6 });

    const text = await tack(['scan'], { cwd: p.dir, env: { ...p.env, HOME: p.home } });
    expect(text.stdout).toContain('skill curl-pipe (score 6; warn at 2, block at 6)');
    expect(text.stdout).toContain('19 skill(s) scanned: 10 block, 1 warn, 8 clean');
  });
});
