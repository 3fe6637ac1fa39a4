import { execFile, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { type FakeRequest, type FakeTurn, providerEnv, toolResults } from '../helpers/fake-provider.js';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';
import { type DocCommand, docCommands, docPages, missingLines, type SkippedBlock } from './walk.js';

const { fake, project } = testScope();

/**
 * The model of the README's `tack run`: what a capable model does with that task and those tools (forecast, then
 * a note), so the transcript the README shows can be compared with what tack prints around it.
 */
function model(request: FakeRequest): FakeTurn {
  const results = toolResults(request);
  const names = new Set(request.tools.map((t) => t.name));
  if (results.length === 0 && names.has('mcp__weather__get_forecast'))
    return { toolCalls: [{ name: 'mcp__weather__get_forecast', input: { city: 'Lisbon' } }] };
  if (results.length === 1 && names.has('mcp__notes__add_note'))
    return {
      toolCalls: [
        {
          name: 'mcp__notes__add_note',
          input: { title: 'Lisbon weather', body: 'Lisbon: 16 °C, sunny, wind 10 km/h N' },
        },
      ],
    };
  return { text: 'It is 16 °C and sunny in Lisbon; the forecast is in your notes.' };
}

/** A project a page's block runs in, copied beside the clone's dist/ so its relative paths hold and nothing it writes lands in the repository. */
function projectFor(folder: string, clone: string): string {
  const target = join(clone, basename(folder));
  if (!existsSync(target)) cpSync(join(REPO, folder), target, { recursive: true });
  return target;
}

interface Ran {
  code: number;
  output: string;
}

function run(command: DocCommand, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  if (command.until !== undefined) {
    const until = command.until;
    return new Promise((resolve) => {
      const child = spawn('sh', ['-c', `exec ${command.command}`], { cwd, env });
      let output = '';
      const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
      const take = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes(until)) child.kill('SIGINT');
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.on('close', () => {
        clearTimeout(timer);
        resolve({ code: output.includes(until) ? 0 : 1, output });
      });
    });
  }
  return new Promise((resolve) =>
    execFile('sh', ['-c', `{ ${command.command}\n} 2>&1`], { cwd, env, timeout: 60_000 }, (error, stdout) => {
      const code = error ? ((error as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, output: stdout });
    }),
  );
}

/**
 * The README and every page of docs/ as a stranger reads them: every command of their console blocks, as
 * written, through a `tack` on the PATH, from a folder laid out like a clone (the repository's folders linked in,
 * so files a command writes stay out of the repository). Each must exit as the page shows, and print what the
 * page shows under it (numbers and column widths aside; `...` stands for lines left out). `export` lines set what
 * the fake model needs.
 */
describe('the docs walk', () => {
  it('every documented command runs as written and prints what the page shows', async () => {
    const commands: DocCommand[] = [];
    const skipped: SkippedBlock[] = [];
    for (const page of docPages()) {
      const found = docCommands(page);
      for (const c of found.commands) commands.push(c);
      for (const s of found.skipped) skipped.push(s);
    }
    expect(commands.length).toBeGreaterThan(15);
    // Each page with console blocks is walked, or says why not.
    expect(new Set([...commands, ...skipped].map((c) => c.file)).size).toBeGreaterThanOrEqual(4);
    const p = project('tack-readme-');
    const clone = join(p.dir, 'clone');
    mkdirSync(clone);
    for (const entry of ['bin', 'dist', 'docs', 'examples', 'node_modules', 'schema', 'test', 'package.json'])
      symlinkSync(join(REPO, entry), join(clone, entry));
    const shims = join(p.dir, 'bin');
    mkdirSync(shims);
    writeFileSync(join(shims, 'tack'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(shims, 'tack'), 0o755);
    const provider = await fake(model);
    const env = {
      ...p.env,
      ...providerEnv(provider),
      PATH: `${shims}:${process.env.PATH}`,
      // What a login shell has, and a test runner may not.
      USER: 'me',
      LOGNAME: 'me',
      SHELL: '/bin/sh',
      TERM: 'xterm-256color',
      TACK_TRUST_PROJECT: undefined,
    };
    const failures: string[] = [];
    for (const command of commands) {
      if (command.command.startsWith('export ')) continue;
      const ran = await run(command, command.in ? projectFor(command.in, clone) : clone, {
        ...env,
        ...(command.trusted ? { TACK_TRUST_PROJECT: '1' } : {}),
      });
      const where = `${command.file}:${command.line} ${command.command}`;
      if (ran.code !== command.exit) {
        failures.push(`${where}: exit ${ran.code}, expected ${command.exit}\n${ran.output.slice(0, 600)}`);
        continue;
      }
      if (!command.compareOutput) continue;
      const missing = missingLines(command.shown, ran.output);
      if (missing.length > 0)
        failures.push(
          `${where}: the page shows lines it did not print:\n  ${missing.join('\n  ')}\n--- it printed:\n${ran.output.slice(0, 1500)}`,
        );
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
