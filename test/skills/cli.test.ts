import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { REPO, tempProject } from '../helpers/project.js';

const REAL = join(REPO, 'examples', 'skills', 'anthropics');
const VALID = join(REPO, 'examples', 'skills', 'team');
const INVALID = join(REPO, 'test', 'fixtures', 'skills', 'invalid');

/**
 * The user's config lists the real skills; the project has a skill of its own, which waits for project trust
 * (`tack trust` or --trust-project), so this project is left untrusted.
 */
function project() {
  const p = tempProject();
  delete p.env.TACK_TRUST_PROJECT;
  mkdirSync(p.home, { recursive: true });
  writeFileSync(join(p.home, 'config.json'), JSON.stringify({ skills: [REAL, VALID] }));
  mkdirSync(join(p.dir, '.git'));
  mkdirSync(join(p.dir, '.agents', 'skills'), { recursive: true });
  cpSync(join(VALID, 'commit-message'), join(p.dir, '.agents', 'skills', 'commit-message'), {
    recursive: true,
  });
  writeFileSync(
    join(p.dir, '.agents', 'skills', 'commit-message', 'SKILL.md'),
    '---\nname: commit-message\ndescription: Project rules for commit messages. Use when committing here.\n---\n# Ours\n',
  );
  return p;
}

describe('tack skills', () => {
  it('list --json: scope, path, tokens of index / body / files, issues, and the tier arithmetic', async () => {
    using p = project();
    const run = await tack(['skills', 'list', '--json'], { cwd: p.dir, env: { ...p.env, HOME: p.home } });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as {
      skills: Array<{
        name: string;
        scope: string;
        path: string;
        tokens: { index: number; body: number; files: number };
        warnings: number;
      }>;
      index: { indexTokens: number; allBodiesTokens: number; budgetTokens: number };
    };
    expect(out.skills).toHaveLength(10);
    const creator = out.skills.find((s) => s.name === 'skill-creator')!;
    expect(creator).toMatchObject({
      scope: 'config',
      path: join(REAL, 'skill-creator', 'SKILL.md'),
      valid: true,
      // Its body's length, and assets/eval_review.html, which this copy lacks (examples in its code are not counted).
      warnings: 2,
    });
    expect(creator.tokens.body).toBeGreaterThan(5000);
    expect(creator.tokens.files).toBeGreaterThan(0);
    expect(out.index.indexTokens).toBeLessThanOrEqual(out.index.budgetTokens);
    expect(out.index.allBodiesTokens).toBeGreaterThan(out.index.indexTokens * 10);
    // Untrusted project: its skill is left out and the user is told how to load it.
    expect(out.skills.find((s) => s.name === 'commit-message')!.scope).toBe('config');
    expect(run.stderr).toMatch(
      /project skills are not loaded until the project is trusted \(tack trust, or --trust-project for one run\)/,
    );

    const trusted = await tack(['skills', 'list', '--trust-project'], {
      cwd: p.dir,
      env: { ...p.env, HOME: p.home },
    });
    expect(trusted.stdout).toMatch(/^commit-message\s+project\s/m);
    expect(trusted.stderr).toMatch(
      /skill 'commit-message' in .*team\/commit-message is shadowed by .*\.agents\/skills\/commit-message \(project scope wins\)/,
    );
    expect(trusted.stdout).toMatch(
      /Every turn: the index costs \d+ tokens \(budget 2000\); every body loaded up front would cost \d+ \(\d+\.\dx the index\)/,
    );
  });

  it('index and show print tiers 1 and 2 as the model gets them', async () => {
    using p = project();
    const env = { ...p.env, HOME: p.home };
    const index = await tack(['skills', 'index', '--budget', '300'], { cwd: p.dir, env });
    expect(index.code).toBe(0);
    expect(index.stdout).toMatch(/^<available_skills>/);
    expect(index.stderr).toMatch(/left out of the index/i);
    const show = await tack(['skills', 'show', 'release-notes'], { cwd: p.dir, env });
    expect(show.stdout).toContain('<skill name="release-notes"');
    const missing = await tack(['skills', 'show', 'ghost'], { cwd: p.dir, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/error: no skill named "ghost"\nhint: Skills: algorithmic-art, /);
    const bad = await tack(['skills', 'index', '--budget', 'lots'], { cwd: p.dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--budget must be a positive integer, got "lots"/);
  });

  it('validate exits 1 on errors, 0 on warnings only, and prints file:line: severity: message', async () => {
    using p = project();
    const env = { ...p.env, HOME: p.home };
    const real = await tack(['skills', 'validate', REAL], { cwd: p.dir, env });
    expect(real.code).toBe(0);
    // Paths outside the working directory stay absolute; below it they are relative (see the next check).
    expect(real.stdout).toContain(
      `${join(REAL, 'webapp-testing', 'SKILL.md')}:12: warning: Referenced file does not exist: scripts/with_server.py`,
    );
    const relativeRun = await tack(['skills', 'validate', 'test/fixtures/skills/invalid/name-uppercase'], {
      cwd: REPO,
      env,
    });
    expect(relativeRun.stdout).toMatch(
      /^test\/fixtures\/skills\/invalid\/name-uppercase\/PDF\/SKILL\.md:2: error: Skill name 'PDF' must be lowercase$/m,
    );
    expect(real.stdout).toMatch(/8 skills checked: 0 errors, 5 warnings\.$/m);
    const upper = await tack(['skills', 'validate', join(INVALID, 'name-uppercase', 'PDF')], {
      cwd: p.dir,
      env,
    });
    expect(upper.code).toBe(1);
    expect(upper.stdout).toContain(
      `${join(INVALID, 'name-uppercase', 'PDF', 'SKILL.md')}:2: error: Skill name 'PDF' must be lowercase`,
    );
    const strict = await tack(['skills', 'validate', '--strict', join(INVALID, 'unknown-field')], {
      cwd: p.dir,
      env,
    });
    expect(strict.code).toBe(1);
    const json = await tack(['skills', 'validate', '--json', INVALID], { cwd: p.dir, env });
    expect(JSON.parse(json.stdout)).toMatchObject({ errors: 19 });
    // No path: every skill tack finds.
    const all = await tack(['skills', 'validate'], { cwd: p.dir, env });
    expect(all.stdout).toMatch(/10 skills checked: 0 errors, 5 warnings\./);
  }, 60_000); // six CLI runs: 8 s on CI, 27 s on a box running three suites at once

  it('validate without paths checks also the skills the library skips, and says why', async () => {
    using p = project();
    const env = { ...p.env, HOME: p.home };
    const broken = join(p.dir, 'broken');
    mkdirSync(join(broken, 'half-done'), { recursive: true });
    writeFileSync(join(broken, 'half-done', 'SKILL.md'), '---\nname: half-done\n---\n# Body\n');
    writeFileSync(join(p.home, 'config.json'), JSON.stringify({ skills: [broken] }));
    const skipped = await tack(['skills', 'validate'], { cwd: p.dir, env });
    expect(skipped.code).toBe(1);
    expect(skipped.stdout).toContain('error: Missing required field in frontmatter: description');
    // The library lists it as invalid, with the same reason, and offers it nowhere.
    const listed = await tack(['skills', 'list', '--json'], { cwd: p.dir, env });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).skills).toEqual([
      expect.objectContaining({
        name: 'half-done',
        valid: false,
        errors: 1,
        reasons: ['Missing required field in frontmatter: description'],
      }),
    ]);
    expect(listed.stderr).toContain(
      "skill 'half-done' is invalid and not offered: Missing required field in frontmatter: description",
    );
  });

  it('run asks first; --yes approves; without a terminal and without --yes it refuses', async () => {
    using p = project();
    const env = { ...p.env, HOME: p.home };
    const refused = await tack(['skills', 'run', 'release-notes', 'collect.sh', 'a'], { cwd: p.dir, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/needs approval and stdin is not a terminal\nhint: Pass --yes/);
    const ran = await tack(['skills', 'run', '--yes', 'release-notes', 'collect.sh', 'a', 'b'], {
      cwd: p.dir,
      env,
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(
      /collect\.sh exited with code 0 .*\n<stdout>\ncollected: a b\ncwd: release-notes/,
    );
  });

  it('a broken skills entry in tack.json names the file and the field', async () => {
    using p = project();
    p.write('tack.json', { skills: ['ok', 3] });
    // An untrusted project's broken file is left out with a warning; once trusted, it is the error it always was.
    const untrusted = await tack(['skills', 'list'], { cwd: p.dir, env: { ...p.env, HOME: p.home } });
    expect(untrusted.code).toBe(0);
    expect(untrusted.stderr).toMatch(
      /^warning: tack\.json: skills\[1\]: expected a folder path, got 3; ignored /m,
    );
    const run = await tack(['skills', 'list', '--trust-project'], {
      cwd: p.dir,
      env: { ...p.env, HOME: p.home },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: tack\.json: skills\[1\]: expected a folder path, got 3$/m);
  });
});
