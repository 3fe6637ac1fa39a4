import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { schemaReference } from '../../src/config/init.js';
import { ptyTack, tack } from '../helpers/cli.js';
import { ownHome, REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const { project } = testScope();

/** A project folder and a home folder of its own, with no other host's files unless a test writes them. */
function setup() {
  const p = project('tack-init-');
  const { dir, home, env, put } = ownHome(p);
  return { dir, home, env, put, run: (args: string[]) => tack(args, { cwd: dir, env }) };
}

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('tack init', () => {
  it('writes tack.json (with a $schema that resolves) and AGENTS.md in an empty folder', async () => {
    const s = setup();
    const run = await s.run(['init']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Wrote ${join(s.dir, 'tack.json')}`);
    expect(run.stdout).toContain(`Wrote ${join(s.dir, 'AGENTS.md')}`);
    expect(run.stdout).toContain(
      'No servers found in the files of Claude Desktop, Claude Code, Cursor, VS Code or Codex.',
    );
    const config = read(join(s.dir, 'tack.json'));
    // The package is outside the project (as a global install is): a file:// URL to the schema it ships.
    expect(config).toEqual({
      $schema: pathToFileURL(join(REPO, 'schema', 'tack.schema.json')).href,
      mcpServers: {},
    });
    expect(existsSync(new URL(config.$schema as string))).toBe(true);
    expect(readFileSync(join(s.dir, 'AGENTS.md'), 'utf8')).toMatch(/^# Guidelines\n/);
    // The written tack.json is one tack reads without a warning.
    const servers = await s.run(['mcp', 'list']);
    expect(servers.stderr).toBe('');
    expect(servers.code).toBe(0);
  });

  it('points $schema into node_modules by a relative path when tack is installed inside the project', () => {
    // The package lies under the project here (a local install): the path works on every clone.
    expect(schemaReference(dirname(REPO))).toBe(`./${REPO.split('/').at(-1)}/schema/tack.schema.json`);
    expect(schemaReference(REPO)).toBe('./schema/tack.schema.json');
  });

  it('never overwrites a file, and says what it left', async () => {
    const s = setup();
    writeFileSync(join(s.dir, 'tack.json'), '{"mcpServers": {"mine": {"command": "x"}}}');
    writeFileSync(join(s.dir, 'CLAUDE.md'), 'mine');
    const run = await s.run(['init']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Kept ${join(s.dir, 'tack.json')}: exists; left as it is`);
    expect(run.stdout).toContain(`Kept ${join(s.dir, 'CLAUDE.md')}: tack reads CLAUDE.md as the guidelines`);
    expect(readFileSync(join(s.dir, 'tack.json'), 'utf8')).toBe('{"mcpServers": {"mine": {"command": "x"}}}');
    expect(existsSync(join(s.dir, 'AGENTS.md'))).toBe(false);
  });

  it('lists and imports the servers of Claude Desktop, Claude Code, Cursor, VS Code and Codex', async () => {
    const s = setup();
    s.put(
      join(s.home, '.config', 'Claude', 'claude_desktop_config.json'),
      JSON.stringify({
        mcpServers: {
          fs: { command: 'npx', args: ['-y', 'server-filesystem', '/tmp'] },
          'bad name': { command: 'x' },
        },
        globalShortcut: 'Ctrl+Space',
      }),
    );
    s.put(
      join(s.home, '.claude.json'),
      JSON.stringify({
        numStartups: 3,
        mcpServers: { memory: { type: 'stdio', command: 'npx', args: ['-y', 'server-memory'], env: {} } },
        projects: { [s.dir]: { mcpServers: { local: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } } },
      }),
    );
    s.put(
      join(s.home, '.cursor', 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          linear: {
            url: 'https://mcp.linear.app/sse',
            headers: { Authorization: 'Bearer ${env:LINEAR_TOKEN}' },
          },
          fs: { command: 'cursor-fs' },
        },
      }),
    );
    s.put(
      join(s.dir, '.vscode', 'mcp.json'),
      JSON.stringify({
        inputs: [{ id: 'key', type: 'promptString' }],
        servers: {
          gh: {
            type: 'http',
            url: 'https://api.example.com/mcp/',
            headers: { Authorization: 'Bearer ${input:key}' },
          },
          py: { type: 'stdio', command: 'python', args: ['${workspaceFolder}/server.py'], envFile: '.env' },
        },
      }),
    );
    s.put(
      join(s.home, '.codex', 'config.toml'),
      [
        'model = "o3"',
        '# a comment',
        '[mcp_servers.docs]',
        'command = "npx"',
        'args = ["-y", "mcp-docs",',
        '  "--flag"]  # trailing',
        "env = { MODE = 'fast' }",
        'startup_timeout_sec = 20',
        '',
        '[mcp_servers.remote]',
        'url = "https://example.com/mcp"',
        'bearer_token_env_var = "REMOTE_TOKEN"',
        '',
        '[mcp_servers.docs2]',
        'command = "node"',
        '[mcp_servers.docs2.env]',
        'A = "1"',
        '',
        '[profiles.x]',
        'instructions = """',
        'several',
        'lines"""',
      ].join('\n'),
    );

    const listing = await s.run(['init']);
    expect(listing.code).toBe(0);
    expect(listing.stdout).toContain(
      `Claude Desktop [claude-desktop]: ${join(s.home, '.config', 'Claude', 'claude_desktop_config.json')}`,
    );
    expect(listing.stdout).toMatch(/^ {2}fs\s+npx -y server-filesystem \/tmp$/m);
    expect(listing.stdout).toMatch(/^ {2}bad name\s+cannot import: server name "bad name" may only contain/m);
    expect(listing.stdout).toContain(
      `Claude Code (this project) [claude-code]: ${join(s.home, '.claude.json')}`,
    );
    expect(listing.stdout).toMatch(
      /^ {2}gh\s+cannot import: uses \$\{input:key\}, a value VS Code asks for/m,
    );
    expect(listing.stdout).toMatch(/^ {2}py\s+python \.\/server\.py\s+left out "envFile"$/m);
    expect(listing.stdout).toContain(`Codex [codex]: ${join(s.home, '.codex', 'config.toml')}`);
    expect(listing.stdout).toContain('tack init --import claude-desktop,claude-code,cursor,vscode,codex');
    // Without a terminal and without --import, nothing was imported.
    expect(read(join(s.dir, 'tack.json')).mcpServers).toEqual({});

    const some = await s.run(['init', '--import', 'cursor,codex', '--json']);
    expect(some.code).toBe(0);
    const report = JSON.parse(some.stdout) as { imported: { added: string[] } };
    expect(report.imported.added).toEqual(['linear', 'fs', 'docs', 'remote', 'docs2']);
    expect(read(join(s.dir, 'tack.json')).mcpServers).toEqual({
      linear: { url: 'https://mcp.linear.app/sse', headers: { Authorization: 'Bearer ${LINEAR_TOKEN}' } },
      fs: { command: 'cursor-fs' },
      docs: {
        command: 'npx',
        args: ['-y', 'mcp-docs', '--flag'],
        env: { MODE: 'fast' },
        startupTimeoutMs: 20000,
      },
      remote: {
        url: 'https://example.com/mcp',
        headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' },
        type: 'http',
      },
      docs2: { command: 'node', env: { A: '1' } },
    });

    // The rest: fs is taken already (refused, exit 1, the file keeps Cursor's), the others are added.
    const rest = await s.run(['init', '--import', 'all']);
    expect(rest.code).toBe(1);
    expect(rest.stderr).toContain(
      `"fs" not imported: ${join(s.dir, 'tack.json')}: a server named "fs" exists already`,
    );
    expect(rest.stdout).toContain('Imported "memory", "local", "py" into');
    const servers = read(join(s.dir, 'tack.json')).mcpServers as Record<string, unknown>;
    expect(servers.fs).toEqual({ command: 'cursor-fs' });
    expect(servers.memory).toEqual({ command: 'npx', args: ['-y', 'server-memory'], env: {} });
    expect(servers.local).toEqual({ type: 'http', url: 'http://127.0.0.1:9/mcp' });
    expect(servers.py).toEqual({ command: 'python', args: ['./server.py'] });
    expect(servers).not.toHaveProperty('gh');
  });

  it('on a terminal, asks file by file which servers to import', async () => {
    const s = setup();
    s.put(
      join(s.home, '.cursor', 'mcp.json'),
      JSON.stringify({ mcpServers: { fromCursor: { command: 'a' } } }),
    );
    s.put(
      join(s.dir, '.vscode', 'mcp.json'),
      JSON.stringify({ servers: { fromVscode: { type: 'stdio', command: 'b' } } }),
    );
    const session = ptyTack(['init'], { cwd: s.dir, env: s.env });
    await session.waitFor(/Import 1 server from Cursor \(user\) \(\S+mcp\.json\)\? \[y\/N\]/);
    session.type('y');
    await session.waitFor(/Import 1 server from VS Code \(this project\)/);
    session.type('n');
    expect(await session.exited()).toBe(0);
    expect(session.output).toContain('Imported "fromCursor" into');
    expect(read(join(s.dir, 'tack.json')).mcpServers).toEqual({ fromCursor: { command: 'a' } });
  });

  it('names a file it cannot read, with the line for TOML, and an unknown --import source', async () => {
    const s = setup();
    s.put(join(s.home, '.codex', 'config.toml'), '[mcp_servers.x]\ncommand = "node"\nwhen = 1979-05-27\n');
    s.put(join(s.home, '.cursor', 'mcp.json'), '{"mcpServers": ');
    const run = await s.run(['init']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Codex \[codex\]: \S+config\.toml\n {2}not read: line 3: expected a string/);
    expect(run.stdout).toMatch(/Cursor \(user\) \[cursor\]: \S+mcp\.json\n {2}not read: not valid JSON/);
    const bad = await s.run(['init', '--import', 'cursr']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      '--import: expected a comma-separated list of claude-desktop, claude-code, cursor, vscode, codex or all, got "cursr"',
    );
  });
});
