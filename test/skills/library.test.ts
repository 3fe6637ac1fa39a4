import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { discoverSkills, scopeRoots } from '../../src/skills/discover.js';
import { SkillLibrary } from '../../src/skills/library.js';
import { runSkillScript } from '../../src/skills/scripts.js';
import { MAX_SKILL_BYTES } from '../../src/skills/skill.js';
import { skillTools } from '../../src/skills/tools.js';
import { countTokens } from '../../src/tokens/count.js';
import { REPO } from '../helpers/project.js';

const REAL = join(REPO, 'examples', 'skills', 'anthropics');
const VALID = join(REPO, 'examples', 'skills', 'team');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A disposable machine: a home and a repository (with .git) holding a nested working directory. */
function world() {
  const root = mkdtempSync(join(tmpdir(), 'tack-skills-'));
  dirs.push(root);
  const home = join(root, 'home');
  const repo = join(root, 'repo');
  const cwd = join(repo, 'packages', 'app');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  const skill = (
    dir: string,
    name: string,
    description = `Does ${name}. Use when the user asks for ${name}.`,
  ) => {
    mkdirSync(join(dir, name), { recursive: true });
    writeFileSync(
      join(dir, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`,
    );
    return join(dir, name);
  };
  return { root, home, repo, cwd, skill };
}

describe('discovery', () => {
  it('reads every scope in precedence order and reports each collision naming both paths', async () => {
    const w = world();
    const configDir = join(w.root, 'shared-skills');
    w.skill(join(w.cwd, '.agents', 'skills'), 'deploy', 'Nearest project copy. Use when deploying.');
    w.skill(join(w.repo, '.claude', 'skills'), 'deploy', 'Repository root copy. Use when deploying.');
    w.skill(join(w.repo, '.claude', 'skills'), 'review');
    w.skill(join(w.home, '.agents', 'skills'), 'review', 'User copy. Use when reviewing.');
    w.skill(join(w.home, '.claude', 'skills'), 'notes');
    w.skill(configDir, 'notes', 'Config copy.');
    w.skill(configDir, 'charts');

    const found = await discoverSkills({
      cwd: w.cwd,
      home: w.home,
      configFolders: [configDir],
      trustProject: true,
    });
    expect(found.skills.map((s) => [s.source.name, s.scope])).toEqual([
      ['deploy', 'project'],
      ['review', 'project'],
      ['notes', 'user'],
      ['charts', 'config'],
    ]);
    expect(found.skills[0]!.source.description).toBe('Nearest project copy. Use when deploying.');
    const collisions = found.warnings.filter((w) => w.includes('shadowed'));
    expect(collisions).toHaveLength(3);
    expect(collisions[0]).toContain(join(w.repo, '.claude', 'skills', 'deploy'));
    expect(collisions[0]).toContain(join(w.cwd, '.agents', 'skills', 'deploy'));
    // Precedence is deterministic and stops at the repository root.
    expect(scopeRoots({ cwd: w.cwd, home: w.home }).map((r) => r.dir)).toEqual([
      join(w.cwd, '.agents', 'skills'),
      join(w.cwd, '.claude', 'skills'),
      join(w.repo, 'packages', '.agents', 'skills'),
      join(w.repo, 'packages', '.claude', 'skills'),
      join(w.repo, '.agents', 'skills'),
      join(w.repo, '.claude', 'skills'),
      join(w.home, '.agents', 'skills'),
      join(w.home, '.claude', 'skills'),
    ]);
  });

  it('leaves project skills out until the project is trusted, and says so', async () => {
    const w = world();
    w.skill(join(w.repo, '.agents', 'skills'), 'sneaky');
    w.skill(join(w.home, '.agents', 'skills'), 'mine');
    const untrusted = await discoverSkills({ cwd: w.cwd, home: w.home });
    expect(untrusted.skills.map((s) => s.source.name)).toEqual(['mine']);
    expect(untrusted.warnings.join('\n')).toMatch(
      /project skills are not loaded until the project is trusted/,
    );
    const trusted = await discoverSkills({ cwd: w.cwd, home: w.home, trustProject: true });
    expect(trusted.skills.map((s) => s.source.name)).toEqual(['sneaky', 'mine']);
  });

  it('skips dot-folders and node_modules, needs a file named exactly SKILL.md, bounds depth and count', async () => {
    const w = world();
    const root = join(w.root, 'lib');
    w.skill(root, 'kept');
    w.skill(join(root, '.hidden'), 'hidden');
    w.skill(join(root, 'node_modules'), 'dep');
    mkdirSync(join(root, 'lower'), { recursive: true });
    writeFileSync(join(root, 'lower', 'skill.md'), '---\nname: lower\ndescription: x\n---\n');
    w.skill(join(root, 'a', 'b', 'c', 'd', 'e'), 'too-deep');
    w.skill(join(root, 'group'), 'nested');
    const found = await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [root], maxDepth: 3 });
    expect(found.skills.map((s) => s.source.name).sort()).toEqual(['kept', 'nested']);

    const many = join(w.root, 'many');
    for (let i = 0; i < 5; i++) w.skill(many, `s${i}`);
    const bounded = await discoverSkills({
      home: w.home,
      cwd: w.cwd,
      configFolders: [many],
      maxSkillsPerScope: 3,
    });
    expect(bounded.skills).toHaveLength(3);
    expect(bounded.warnings.join('\n')).toMatch(/more than 3 skills; the rest are ignored/);
  });

  it('follows a symlink inside the scope and refuses one that leads out', async () => {
    const w = world();
    const root = join(w.root, 'lib');
    const real = w.skill(join(root, 'store'), 'linked');
    symlinkSync(real, join(root, 'alias'));
    const outside = w.skill(join(w.root, 'elsewhere'), 'escaped');
    symlinkSync(outside, join(root, 'escape'));
    const found = await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [root] });
    expect(found.skills.map((s) => s.source.name)).toEqual(['linked']);
    expect(found.warnings.join('\n')).toMatch(/escape: symlink leads outside .*; not followed/);
  });

  it('warns, naming the folder, when skills are nested deeper than searched (issue 28, defect 8)', async () => {
    const w = world();
    const root = join(w.root, 'lib');
    w.skill(join(root, 'a', 'b', 'c'), 'at-the-limit');
    w.skill(join(root, 'a', 'b', 'c', 'd'), 'too-deep');
    w.skill(join(root, 'x', 'y', 'z', 'w', 'v'), 'deeper-still');
    const found = await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [root] });
    expect(found.skills.map((s) => s.source.name)).toEqual(['at-the-limit']);
    expect(found.warnings).toEqual([
      `${root}: 2 folders are more than 4 levels deep and not searched for skills (the first: ${join(root, 'a', 'b', 'c', 'd', 'too-deep')}); a skill there is ignored: move it up, or name its parent folder under "skills" in tack.json`,
    ]);
    // Nothing deeper than the limit: no warning.
    const shallow = join(w.root, 'shallow');
    w.skill(join(shallow, 'group'), 'fine');
    expect((await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [shallow] })).warnings).toEqual(
      [],
    );
  });

  it('reports a symlink loop once, as a loop, and never a skill as shadowed by itself (issue 28, defect 8)', async () => {
    const w = world();
    const root = join(w.root, 'lib');
    w.skill(join(root, 'group'), 'looped');
    symlinkSync(root, join(root, 'group', 'back-to-root'));
    symlinkSync(join(root, 'group'), join(root, 'group', 'itself'));
    // Two folders linking to each other, and a second name for a skill folder.
    mkdirSync(join(root, 'p'), { recursive: true });
    mkdirSync(join(root, 'q'), { recursive: true });
    symlinkSync(join(root, 'q'), join(root, 'p', 'to-q'));
    symlinkSync(join(root, 'p'), join(root, 'q', 'to-p'));
    symlinkSync(join(root, 'group', 'looped'), join(root, 'alias'));
    const found = await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [root] });
    expect(found.skills.map((s) => s.source.dir)).toEqual([join(root, 'group', 'looped')]);
    expect(found.warnings.filter((w) => w.includes('shadowed'))).toEqual([]);
    expect(found.warnings.sort()).toEqual(
      [
        `${join(root, 'group', 'back-to-root')}: symlink loop (it leads back to ${root}, a folder it is reached through); not followed`,
        `${join(root, 'group', 'itself')}: symlink loop (it leads back to ${join(root, 'group')}, a folder it is reached through); not followed`,
        `${join(root, 'q', 'to-p')}: symlink loop (it leads back to ${join(root, 'p')}, a folder it is reached through); not followed`,
      ].sort(),
    );
  });

  it('keeps a character that straddles two reads of the head whole', async () => {
    const w = world();
    const dir = w.skill(join(w.root, 'lib'), 'accents');
    const prefix = '---\nname: accents\ndescription: ';
    // "é" is two bytes in UTF-8: put its first byte at offset 4095, the last of the first 4 KiB read.
    const description = `${'x'.repeat(4095 - prefix.length)}é then more words. Use when testing.`;
    writeFileSync(join(dir, 'SKILL.md'), `${prefix}${description}\n---\n# Body\n`);
    const found = await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [join(w.root, 'lib')] });
    expect(found.skills[0]!.source.description).toBe(description);
  });

  it('reads only the front matter at discovery, not the body', async () => {
    const w = world();
    const dir = w.skill(join(w.root, 'lib'), 'big');
    writeFileSync(
      join(dir, 'SKILL.md'),
      `---\nname: big\ndescription: Big body. Use when testing.\n---\n${'body line\n'.repeat(200_000)}`,
    );
    const found = await discoverSkills({ home: w.home, cwd: w.cwd, configFolders: [join(w.root, 'lib')] });
    expect(found.skills[0]!.source.description).toBe('Big body. Use when testing.');
    // 2 MB of body on disk; the head read stops after the closing ---.
    expect(found.skills[0]!.source.frontMatter.body.length).toBeLessThan(64 * 1024);
  });
});

describe('tier 1: the index', () => {
  it('fits the real skills in the default budget and reports the cost of each', async () => {
    const library = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [REAL] });
    const index = await library.renderIndex({ countTokens });
    expect(index.budgetTokens).toBe(2000);
    expect(index.entries).toHaveLength(8);
    expect(index.dropped).toEqual([]);
    expect(index.text).toMatch(/^<available_skills>\n<skill>\n<name>algorithmic-art<\/name>/);
    const sum = index.entries.reduce((total, e) => total + e.tokens, 0);
    expect(index.tokens).toBeGreaterThanOrEqual(sum);
    expect(index.tokens).toBe(await countTokens(index.text));
  });

  it('over budget: shortens descriptions first, then drops skills from the end, and says which', async () => {
    const library = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [REAL] });
    const full = await library.renderIndex({ countTokens });
    const tight = await library.renderIndex({ countTokens, budgetTokens: Math.floor(full.tokens * 0.8) });
    expect(tight.shortened.length).toBeGreaterThan(0);
    expect(tight.dropped).toEqual([]);
    expect(tight.tokens).toBeLessThanOrEqual(tight.budgetTokens);

    const tiny = await library.renderIndex({ countTokens, budgetTokens: 250 });
    expect(tiny.dropped.length).toBeGreaterThan(0);
    expect(tiny.tokens).toBeLessThanOrEqual(250);
    // Dropped from the end: what is left is a prefix of the precedence order.
    const kept = tiny.entries.map((e) => e.name);
    expect(kept).toEqual(library.skills.slice(0, kept.length).map((s) => s.name));
    expect([...kept, ...tiny.dropped]).toEqual(library.skills.map((s) => s.name));
  });

  it('caps each entry', async () => {
    const w = world();
    w.skill(
      join(w.root, 'lib'),
      'wordy',
      // 836 characters: within the spec's 1,024, far past the entry cap.
      `${'Very detailed explanation of everything. '.repeat(20)}Use when needed.`,
    );
    const library = await SkillLibrary.discover({
      home: w.home,
      cwd: w.cwd,
      configFolders: [join(w.root, 'lib')],
    });
    const index = await library.renderIndex({ countTokens, maxEntryTokens: 60 });
    expect(index.entries[0]!.tokens).toBeLessThanOrEqual(60);
    expect(index.shortened).toEqual(['wordy']);
  });
});

describe('tier 2 and 3: activation, files, scripts', () => {
  async function valid() {
    return SkillLibrary.discover({ home: '/nonexistent', configFolders: [VALID] });
  }

  it('activate_skill returns the body wrapped with the folder and its files, once per session', async () => {
    const library = await valid();
    const active = new Set<string>();
    const first = await library.activate('release-notes', active);
    expect(first.alreadyActive).toBe(false);
    expect(first.text).toContain(`<skill name="release-notes" folder="${join(VALID, 'release-notes')}">`);
    expect(first.text).toContain('# Release notes');
    expect(first.text).not.toContain('description:'); // the body, not the front matter
    expect(first.text).toContain('references/STYLE.md\nscripts/collect.sh');
    const again = await library.activate('release-notes', active);
    expect(again.alreadyActive).toBe(true);
    expect(again.text).not.toContain('# Release notes');
    await expect(library.activate('nope', active)).rejects.toThrow(/no skill named "nope"/);
  });

  it('read_skill_file reads inside the folder only: no .., no absolute path, no symlink out', async () => {
    const w = world();
    const lib = join(w.root, 'lib');
    cpSync(join(VALID, 'release-notes'), join(lib, 'release-notes'), { recursive: true });
    writeFileSync(join(w.root, 'secret.txt'), 'TOP SECRET');
    symlinkSync(join(w.root, 'secret.txt'), join(lib, 'release-notes', 'references', 'leak.md'));
    const library = await SkillLibrary.discover({ home: w.home, cwd: w.cwd, configFolders: [lib] });
    expect((await library.readFile('release-notes', 'references/STYLE.md')).text).toContain('Group by Added');
    for (const bad of ['../secret.txt', 'references/../../secret.txt', join(w.root, 'secret.txt'), '']) {
      await expect(library.readFile('release-notes', bad)).rejects.toThrow(/inside the skill folder/);
    }
    await expect(library.readFile('release-notes', 'references/leak.md')).rejects.toThrow(/leads outside/);
    await expect(library.readFile('release-notes', 'references/NOPE.md')).rejects.toThrow(/does not exist/);
  });

  it('a SKILL.md past 1 MiB is invalid: not offered, and the library says why; at 1 MiB it loads', async () => {
    const w = world();
    const lib = join(w.root, 'lib');
    const big = w.skill(lib, 'big');
    const head = '---\nname: big\ndescription: Big. Use when testing the cap.\n---\n';
    writeFileSync(join(big, 'SKILL.md'), head + 'x'.repeat(MAX_SKILL_BYTES + 1 - head.length));
    const atCap = w.skill(lib, 'at-cap');
    const capHead = '---\nname: at-cap\ndescription: At the cap. Use when testing the cap.\n---\n# At cap\n';
    writeFileSync(join(atCap, 'SKILL.md'), capHead + 'y'.repeat(MAX_SKILL_BYTES - capHead.length));
    // A referenced file far past read_skill_file's cap: only its head is read.
    mkdirSync(join(atCap, 'references'));
    writeFileSync(join(atCap, 'references', 'HUGE.md'), 'z'.repeat(3 * 1024 * 1024));
    const library = await SkillLibrary.discover({ home: w.home, cwd: w.cwd, configFolders: [lib] });
    // One verdict: the validator's error keeps it out of the index, the tools and the servers alike.
    expect(library.skills.map((s) => s.name)).toEqual(['at-cap']);
    expect(library.invalid.map((s) => [s.name, s.errors.map((e) => e.rule)])).toEqual([
      ['big', ['body-size']],
    ]);
    expect(library.warnings).toEqual([
      `${join(big, 'SKILL.md')}: skill 'big' is invalid and not offered: SKILL.md is ${MAX_SKILL_BYTES + 1} bytes, over the cap of ${MAX_SKILL_BYTES} bytes (1 MiB) for a skill's instructions: its body is not loaded. Keep SKILL.md short (the Agent Skills spec recommends under 500 lines and 5,000 tokens) and move the details to files its body names (references/...), which are read one at a time`,
    ]);
    const active = new Set<string>();
    await expect(library.activate('big', active)).rejects.toThrow(
      `skill 'big' is invalid and not offered: SKILL.md is ${MAX_SKILL_BYTES + 1} bytes, over the cap`,
    );
    expect(active.has('big')).toBe(false);
    expect((await library.activate('at-cap', active)).text).toContain('# At cap\nyyy');
    const huge = await library.readFile('at-cap', 'references/HUGE.md');
    expect(huge.truncated).toBe(true);
    expect(huge.text).toMatch(/\[\.\.\. truncated at 262144 bytes of 3145728\]$/);
  });

  it('run_skill_script runs from scripts/ in the skill folder with the safe environment, after approval', async () => {
    const library = await valid();
    const skill = library.require('release-notes');
    const asked: string[][] = [];
    const result = await runSkillScript(skill, 'collect.sh', ['v1.2', 'two words'], {
      approve: (request) => {
        asked.push([...request.command]);
        return true;
      },
    });
    expect(asked).toEqual([
      ['bash', join(VALID, 'release-notes', 'scripts', 'collect.sh'), 'v1.2', 'two words'],
    ]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('collected: v1.2 two words\ncwd: release-notes\n');

    process.env.TACK_TEST_SECRET = 'sk-live-123';
    try {
      const env = await runSkillScript(skill, 'env.js', [], { approve: () => true });
      const keys = JSON.parse(env.stdout) as string[];
      expect(keys).not.toContain('TACK_TEST_SECRET');
      expect(keys).toContain('PATH');
    } finally {
      delete process.env.TACK_TEST_SECRET;
    }
  });

  it('refuses without approval, when denied, and outside scripts/', async () => {
    const library = await valid();
    const skill = library.require('release-notes');
    await expect(runSkillScript(skill, 'collect.sh')).rejects.toThrow(/needs approval/);
    await expect(runSkillScript(skill, 'collect.sh', [], { approve: () => false })).rejects.toThrow(
      /was not approved/,
    );
    await expect(runSkillScript(skill, '../SKILL.md', [], { approve: () => true })).rejects.toThrow(
      /inside the skill folder/,
    );
    await expect(runSkillScript(skill, 'missing.py', [], { approve: () => true })).rejects.toThrow(
      /does not exist/,
    );
  });

  it('kills a script at the timeout and caps its output', async () => {
    const library = await valid();
    const skill = library.require('release-notes');
    const slow = await runSkillScript(skill, 'sleep.js', [], { approve: () => true, timeoutMs: 500 });
    expect(slow.timedOut).toBe(true);
    expect(slow.stdout).toBe('started\n');
    const flood = await runSkillScript(skill, 'flood.js', [], { approve: () => true, maxOutputBytes: 1000 });
    expect(flood.exitCode).toBe(3);
    expect(flood.stdout).toHaveLength(1000);
    expect(flood.droppedBytes).toBe(199_000);
    expect(flood.stderr).toBe('oops\n');
  });

  it('the native tools give the model text it can act on, errors included', async () => {
    const library = await valid();
    const approvals: string[] = [];
    const tools = skillTools(library, {
      approve: (r) => {
        approvals.push(r.script);
        return true;
      },
    });
    expect(tools.map((t) => t.name)).toEqual(['activate_skill', 'read_skill_file', 'run_skill_script']);
    const [activate, read, run] = tools as [(typeof tools)[0], (typeof tools)[0], (typeof tools)[0]];
    expect((await activate.execute({ name: 'commit-message' })).text).toContain('# Commit messages');
    expect((await activate.execute({ name: 'commit-message' })).text).toMatch(/already active/);
    expect(await activate.execute({ name: 'ghost' })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/Skills: commit-message, release-notes/),
    });
    expect(await activate.execute({})).toMatchObject({
      isError: true,
      text: 'activate_skill: "name" must be a non-empty string',
    });
    expect((await read.execute({ name: 'release-notes', path: 'assets/template.md' })).text).toContain(
      '{{version}}',
    );
    const ran = await run.execute({ name: 'release-notes', script: 'collect.sh', args: ['x'] });
    expect(ran.isError).toBe(false);
    expect(ran.text).toMatch(/^collect\.sh exited with code 0 after \d+ ms\.\n<stdout>\ncollected: x/);
    expect(ran.text).not.toContain('#!/usr/bin/env bash'); // output, never source
    expect(approvals).toEqual(['collect.sh']);
    expect(await run.execute({ name: 'release-notes', script: 'collect.sh', args: 'x' })).toMatchObject({
      isError: true,
    });
  });
});
