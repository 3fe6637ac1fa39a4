import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addServer } from '../../src/config/edit.js';
import { parseTomlSubset } from '../../src/config/toml-subset.js';
import { BIN, type Run } from '../helpers/cli.js';
import { ownHome } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

/*
 * `tack init`'s import and `tack mcp add|list|get` read files nobody vouched for: other hosts' configs under the
 * home folder, a cloned project's .mcp.json. A planted FIFO or device must not hang them, a file built to nest
 * deep must not crash them, and a credential must not be copied into a committed file or shown by a listing.
 */

const { project } = testScope();

/** The real binary, killed after `ms`: a hang shows as a failed run, not a stuck test. */
function run(args: string[], cwd: string, env: Record<string, string | undefined>, ms = 15_000) {
  return new Promise<Run & { killed: boolean }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env, timeout: ms, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? ((error as { code?: number }).code ?? 1) : 0,
          killed: error?.killed === true,
          stdout,
          stderr,
        }),
    );
  });
}

function setup() {
  const p = project('tack-hostile-import-');
  const { dir, home, env, put } = ownHome(p);
  return { dir, home, env, put, userConfig: join(p.home, 'config.json') };
}

describe('tack init against hostile host files', () => {
  it('does not hang on a FIFO nor read /dev/zero forever: each is listed as not read', async () => {
    const s = setup();
    mkdirSync(join(s.home, '.codex'));
    symlinkSync('/dev/zero', join(s.home, '.codex', 'config.toml'));
    mkdirSync(join(s.home, '.cursor'));
    execFileSync('mkfifo', [join(s.home, '.cursor', 'mcp.json')]);
    const result = await run(['init'], s.dir, s.env);
    expect(result.killed).toBe(false);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Codex [codex]: ${join(s.home, '.codex', 'config.toml')}`);
    expect(result.stdout).toContain(`Cursor (user) [cursor]: ${join(s.home, '.cursor', 'mcp.json')}`);
    expect(result.stdout.match(/not read: not a regular file \(a device, FIFO or folder\)/g)).toHaveLength(2);
  });

  it('refuses TOML nested past the limit through dotted keys and table headers, and does not crash', async () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `k${i}`).join('.');
    expect(() => parseTomlSubset(`a.${keys} = 1`)).toThrow(/line 1: nested deeper than 32 levels/);
    expect(() => parseTomlSubset(`[${keys}]`)).toThrow(/line 1: nested deeper than 32 levels/);
    // 20 levels of table, then 20 of dotted key: deep together.
    const twenty = Array.from({ length: 20 }, (_, i) => `t${i}`).join('.');
    expect(() => parseTomlSubset(`[${twenty}]\n${twenty} = 1`)).toThrow(/line 2: nested deeper/);
    expect(() => parseTomlSubset(`a = { ${twenty}.${twenty} = 1 }`)).toThrow(/nested deeper/);
    // What Codex writes stays readable.
    expect(parseTomlSubset('[mcp_servers.x.env]\nA.B = "1"')).toEqual({
      mcp_servers: { x: { env: { A: { B: '1' } } } },
    });

    const s = setup();
    s.put(join(s.home, '.codex', 'config.toml'), `[mcp_servers.x]\ncommand = "echo"\nargs.${keys} = 1\n`);
    const listed = await run(['init', '--json'], s.dir, s.env);
    expect(listed.stderr).not.toContain('Maximum call stack');
    expect(listed.code).toBe(0);
    const found = (JSON.parse(listed.stdout) as { found: Array<{ source: string; error?: string }> }).found;
    expect(found).toEqual([
      expect.objectContaining({ source: 'codex', error: 'line 3: nested deeper than 32 levels' }),
    ]);
  });

  it('does not copy a credential from a private host file into tack.json, and says why', async () => {
    const s = setup();
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB';
    s.put(
      join(s.home, '.config', 'Claude', 'claude_desktop_config.json'),
      JSON.stringify({
        mcpServers: {
          gh: { command: 'npx', args: ['-y', 'gh-server'], env: { GITHUB_TOKEN: token } },
          remote: {
            type: 'http',
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer abcdefabcdefabcdefabcdef123456' },
          },
          plain: { command: 'echo', env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } },
        },
      }),
    );
    const result = await run(['init', '--import', 'claude-desktop'], s.dir, s.env);
    expect(result.code).toBe(1);
    const written = readFileSync(join(s.dir, 'tack.json'), 'utf8');
    expect(written).not.toContain(token);
    expect(written).not.toContain('abcdefabcdefabcdefabcdef123456');
    expect(Object.keys((JSON.parse(written) as { mcpServers: object }).mcpServers)).toEqual(['plain']);
    expect(result.stderr).toContain(
      `"gh" not imported: "gh" holds a credential as a value, and ${join(s.dir, 'tack.json')} is a project file, usually committed: not copied there`,
    );
    expect(result.stderr).toContain('env GITHUB_TOKEN holds a credential');
    expect(result.stderr).toContain('"remote" not imported');
    expect(result.stdout).toContain('Imported "plain"');
  });
});

describe('tack mcp against hostile config files', () => {
  it('a FIFO planted as the project .mcp.json hangs neither list nor add', async () => {
    const s = setup();
    execFileSync('mkfifo', [join(s.dir, '.mcp.json')]);
    const list = await run(['mcp', 'list'], s.dir, s.env);
    expect(list.killed).toBe(false);
    expect(list.stderr).toContain('.mcp.json: cannot read the configuration file (ENOTREG)');
    const add = await run(['mcp', 'add', 'x', '--', 'echo'], s.dir, s.env);
    expect(add.killed).toBe(false);
    expect(add.code).toBe(2);
    expect(add.stderr).toContain(`${join(s.dir, '.mcp.json')} is not a regular file`);
  });

  it('get --json and list mask credentials written as values, as get does on a terminal', async () => {
    const s = setup();
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB';
    const scope = ['-s', 'user'];
    const added = await run(
      [
        'mcp',
        'add',
        ...scope,
        's1',
        '-e',
        'API_KEY=hunter2hunter2',
        '-e',
        `GH=${token}`,
        '--',
        'echo',
        token,
      ],
      s.dir,
      s.env,
    );
    expect(added.code).toBe(0);
    const http = [
      'mcp',
      'add',
      ...scope,
      'h1',
      '--transport',
      'http',
      'https://user:pa55word@example.com/mcp',
    ];
    expect((await run(http, s.dir, s.env)).code).toBe(0);
    expect(readFileSync(s.userConfig, 'utf8')).toContain(token);

    const get = await run(['mcp', 'get', 's1', '--json'], s.dir, s.env);
    expect(get.code).toBe(0);
    expect(get.stdout).not.toContain(token);
    expect(get.stdout).not.toContain('hunter2hunter2');
    expect((JSON.parse(get.stdout) as { entry: { env: object } }).entry.env).toEqual({
      API_KEY: '••••',
      GH: 'ghp_••••',
    });
    for (const args of [
      ['mcp', 'list'],
      ['mcp', 'list', '--json'],
    ]) {
      const list = await run(args, s.dir, s.env);
      expect(list.code).toBe(0);
      expect(list.stdout).toContain('ghp_••••');
      expect(list.stdout).not.toContain(token);
      expect(list.stdout).not.toContain('pa55word');
      expect(list.stdout).toContain('https://user:••••@example.com/mcp');
    }
  });

  it('writes through a fresh temporary file, never through a link planted at its name', () => {
    const s = setup();
    const victim = join(s.home, '.bashrc');
    writeFileSync(victim, 'export PATH=$PATH\n', { mode: 0o600 });
    writeFileSync(join(s.dir, 'tack.json'), '{"mcpServers": {}}');
    // A cloned project can carry such a link for every likely pid; this one is for the pid that writes.
    symlinkSync(victim, join(s.dir, `tack.json.${process.pid}.tmp`));
    addServer({ cwd: s.dir, env: s.env, scope: 'tack', name: 'x', entry: { command: 'echo' } });
    expect(readFileSync(victim, 'utf8')).toBe('export PATH=$PATH\n');
    expect(statSync(victim).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(s.dir, 'tack.json')).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(join(s.dir, 'tack.json'), 'utf8'))).toEqual({
      mcpServers: { x: { command: 'echo' } },
    });
  });

  it('a server named like an Object method is not found in every file', async () => {
    const s = setup();
    writeFileSync(join(s.dir, 'tack.json'), '{"mcpServers": {}}');
    const added = await run(['mcp', 'add', '-s', 'user', 'constructor', '--', 'echo'], s.dir, s.env);
    expect(added.code).toBe(0);
    expect(added.stderr).not.toContain('also defines');
    const removed = await run(['mcp', 'remove', 'constructor'], s.dir, s.env);
    expect(removed.stderr).toBe('');
    expect(removed.stdout).toContain(`Removed "constructor" from ${s.userConfig}`);
  });
});
