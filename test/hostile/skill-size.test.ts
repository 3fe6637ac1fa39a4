import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { type Service, startService } from '../helpers/processes.js';
import { type TempProject, tempProject } from '../helpers/project.js';

/**
 * Issue 28, defect 6: a 50 MB SKILL.md with valid front matter took `tack skills list` 670 s and 2.5 GB, and
 * froze every page and API of `tack console` for over 9 minutes: the body had no cap and was token-counted whole,
 * synchronously. A SKILL.md is read up to its cap (MAX_SKILL_BYTES, 1 MiB) now; past it the skill is invalid
 * (issue 29: one verdict everywhere): listed with the reason, its body not loaded, never offered or served.
 */
const SIZE = 50 * 1024 * 1024;
const HEAD =
  '---\nname: big\ndescription: A very large skill. Use when testing how tack bounds a SKILL.md.\n---\n';

/** 50 MB of Markdown after valid front matter, written at once from one buffer. */
function writeBigSkill(file: string): void {
  const buffer = Buffer.allocUnsafe(SIZE);
  const head = buffer.write(HEAD);
  buffer.fill('The quick brown fox reads references/REFERENCE.md and jumps over the lazy dog.\n', head);
  writeFileSync(file, buffer);
}

/** Runs `tack args` in `cwd`, killed after `timeoutMs` (today's code ran for minutes). */
function tackWithin(
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined>; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

describe('a 50 MB SKILL.md', () => {
  let project: TempProject;
  let env: Record<string, string | undefined>;
  let bigFile: string;

  beforeAll(() => {
    project = tempProject('tack-big-skill-');
    env = { ...project.env, HOME: project.home };
    const skills = join(project.dir, 'skills');
    mkdirSync(join(skills, 'big'), { recursive: true });
    mkdirSync(join(skills, 'small'), { recursive: true });
    bigFile = join(skills, 'big', 'SKILL.md');
    writeBigSkill(bigFile);
    writeFileSync(
      join(skills, 'small', 'SKILL.md'),
      '---\nname: small\ndescription: A small skill. Use when testing a big neighbour.\n---\n# Small\n\nDo it well.\n',
    );
    project.write('tack.json', { skills: ['skills'] });
  });

  afterAll(() => project?.[Symbol.dispose]());

  it('tack skills list answers at once: the skill lists as invalid, the reason naming the file, its size and the cap', async () => {
    const list = await tackWithin(['skills', 'list', '--json'], {
      cwd: project.dir,
      env,
      timeoutMs: 45_000,
    });
    expect(list.code, list.stderr).toBe(0);
    // Today's code took minutes (670 s measured in the issue; killed here at 45 s).
    expect(list.ms).toBeLessThan(20_000);
    expect(list.stderr).toContain(
      `${bigFile}: skill 'big' is invalid and not offered: SKILL.md is ${SIZE} bytes, over the cap of 1048576 bytes (1 MiB) for a skill's instructions: its body is not loaded.`,
    );
    const rows = (
      JSON.parse(list.stdout) as {
        skills: Array<{ name: string; valid: boolean; errors: number; tokens: { body: number } }>;
      }
    ).skills;
    const big = rows.find((row) => row.name === 'big');
    expect(big).toMatchObject({ valid: false, errors: 1 });
    // Not offered: nothing of its 50 MB is loaded or counted.
    expect(big!.tokens.body).toBe(0);
    expect(rows.find((row) => row.name === 'small')).toMatchObject({ valid: true, errors: 0 });

    const validate = await tackWithin(['skills', 'validate', join(project.dir, 'skills')], {
      cwd: project.dir,
      env,
      timeoutMs: 45_000,
    });
    expect(validate.code).toBe(1);
    // The file relative to the working directory, as editors link it.
    expect(validate.stdout).toContain(
      `skills/big/SKILL.md:1: error: SKILL.md is ${SIZE} bytes, over the cap of 1048576 bytes (1 MiB)`,
    );
  }, 60_000);

  describe('tack console', () => {
    let service: Service | undefined;
    let origin: string;
    let auth: Record<string, string>;

    beforeAll(async () => {
      service = await startService(process.execPath, [BIN, 'console'], {
        cwd: project.dir,
        env,
        ready: /tack console: (http:\/\/\S+)\n/,
      });
      const url = new URL(/tack console: (http:\/\/\S+)\n/.exec(service.output())![1]!);
      origin = url.origin;
      auth = { authorization: `Bearer ${url.searchParams.get('token')}` };
    });

    afterAll(async () => {
      // Today's code is busy for minutes and would not stop on SIGTERM.
      const child = service?.process;
      const killer = setTimeout(() => child?.kill('SIGKILL'), 3_000);
      await service?.stop();
      clearTimeout(killer);
    });

    const get = (path: string, timeoutMs: number) =>
      fetch(`${origin}${path}`, { headers: auth, signal: AbortSignal.timeout(timeoutMs) });

    it("answers the skills API while the big skill's page is being read", async () => {
      expect((await get('/api/skills', 20_000)).status).toBe(200);
      const started = performance.now();
      let detailMs = 0;
      const detail = get('/api/skills/big', 40_000).then(async (response) => {
        detailMs = performance.now() - started;
        return { status: response.status, body: await response.json() };
      });
      detail.catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 100));
      const indexStarted = performance.now();
      const index = await get('/api/skills', 10_000);
      const indexMs = performance.now() - indexStarted;
      expect(index.status).toBe(200);
      const view = (await index.json()) as {
        skills: Array<{ name: string }>;
        invalid: Array<{ name: string }>;
      };
      expect(view.skills.map((s) => s.name)).toEqual(['small']);
      expect(view.invalid.map((s) => s.name)).toEqual(['big']);
      // Generous for a loaded machine; the frozen console answered after minutes.
      expect(indexMs).toBeLessThan(2_000);

      const { status, body } = (await detail) as {
        status: number;
        body: {
          valid: boolean;
          body: string;
          bodyTokens: number;
          issues: Array<{ severity: string; message: string }>;
        };
      };
      expect(status).toBe(200);
      expect(detailMs).toBeLessThan(20_000);
      expect(body.valid).toBe(false);
      expect(body.body).toContain("skill 'big' is invalid and not offered");
      expect(body.body).toContain('its body is not loaded');
      expect(body.bodyTokens).toBeLessThan(500);
      expect(body.issues).toEqual([
        expect.objectContaining({
          severity: 'error',
          message: expect.stringMatching(/^SKILL\.md is 52428800 bytes, over the cap of 1048576 bytes/),
        }),
      ]);
      expect((await get('/api/skills/small', 10_000)).status).toBe(200);
    }, 60_000);
  });
});
