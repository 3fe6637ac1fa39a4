import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { REPO, tempProject } from '../helpers/project.js';

const HOOK = join(REPO, 'test', 'fixtures', 'hooks', 'record-imports.mjs');
const EXAMPLES = join(REPO, 'examples', 'tack.json');

/** Runs the real binary with a module-resolution recorder; returns the exit code, stdout and what it loaded. */
function traced(args: string[], env: Record<string, string | undefined>, file: string) {
  rmSync(file, { force: true });
  return new Promise<{ code: number; stdout: string; loaded: string[] }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', HOOK, BIN, ...args],
      { cwd: REPO, env: { ...env, TACK_TEST_IMPORTS: file } },
      (error, stdout) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          stdout,
          loaded: existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [],
        }),
    );
  });
}

const tokenizer = (loaded: string[]) => loaded.some((url) => url.includes('tokenizer-qwen3'));
const commandModules = (loaded: string[]) => loaded.filter((url) => url.includes('/dist/src/cli/commands/'));

/**
 * What start-up loads (issue 18): `--version` and `--help` none of the commands, a command only its own part of
 * the library, a tokenizer only where counts in the model's tokens are printed, and not even there once the store
 * has the counts.
 * Speed itself is measured in bench/ (startup), never here.
 */
describe('start-up', () => {
  it('--version and --help load no command; servers and an estimated tools load no tokenizer; a warm tools loads none either', async () => {
    using project = tempProject();
    const file = join(project.dir, 'imports.txt');
    const version = await traced(['--version'], project.env, file);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(commandModules(version.loaded)).toEqual([]);
    const help = await traced(['--help'], project.env, file);
    expect(help.stdout).toContain('Usage: tack');
    expect(commandModules(help.loaded)).toEqual([]);
    expect(help.loaded.some((url) => url.includes('/node_modules/ai/'))).toBe(false);
    // The console (its HTTP layer and the SDK's host checks) loads only when `tack console` runs.
    for (const run of [version, help]) {
      expect(run.loaded.filter((url) => url.includes('/dist/src/console/'))).toEqual([]);
    }
    expect(help.stdout).toContain('console');
    // The full-screen chat (Ink, React, marked) is loaded by `tack chat` in a terminal only.
    for (const run of [version, help])
      expect(
        run.loaded.filter((url) => /\/node_modules\/(ink|react|marked)\/|\/dist\/src\/tui\//.test(url)),
      ).toEqual([]);

    const servers = await traced(['servers', '--config', EXAMPLES], project.env, file);
    expect(servers.code).toBe(0);
    expect(commandModules(servers.loaded).map((url) => url.split('/').at(-1))).toEqual(['servers.js']);
    expect(tokenizer(servers.loaded)).toBe(false);
    // Without OTEL_EXPORTER_OTLP_ENDPOINT nothing of OpenTelemetry loads, though every MCP request may be a span.
    expect(servers.loaded.filter((url) => url.includes('/node_modules/@opentelemetry/'))).toEqual([]);

    // No model configured: the figures are the estimate, and not even a cold listing loads a tokenizer.
    const estimated = await traced(['tools', '--json', '--config', EXAMPLES], project.env, file);
    expect(estimated.code).toBe(0);
    expect(JSON.parse(estimated.stdout).tokenizer).toBe('estimate');
    expect(tokenizer(estimated.loaded)).toBe(false);

    // A Qwen model: its tokenizer counts, loaded by the cold listing only.
    const qwen = project.write('qwen.json', {
      agent: { model: 'openai-compatible:qwen3-8b' },
      mcpServers: {
        notes: { command: 'node', args: [join(REPO, 'dist', 'examples', 'servers', 'notes.js')] },
      },
    });
    const cold = await traced(['tools', '--json', '--config', qwen], project.env, file);
    expect(cold.code).toBe(0);
    expect(JSON.parse(cold.stdout).tokenizer).toBe('qwen3');
    expect(tokenizer(cold.loaded)).toBe(true);
    const warm = await traced(['tools', '--json', '--config', qwen], project.env, file);
    expect(warm.code).toBe(0);
    expect(tokenizer(warm.loaded)).toBe(false);
    // The same figures, counted once.
    expect(JSON.parse(warm.stdout).totals).toEqual(JSON.parse(cold.stdout).totals);
  }, 60_000);
});
