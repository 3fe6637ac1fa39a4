import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  formatIssue,
  type HttpServerConfig,
  loadConfig,
  type StdioServerConfig,
} from '../../src/config/load.js';
import { resolvePaths } from '../../src/config/paths.js';
import { TackError } from '../../src/errors.js';
import { tempProject } from '../helpers/project.js';

function configError(fn: () => unknown): TackError {
  try {
    fn();
  } catch (error) {
    if (TackError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a configuration error');
}

describe('loadConfig', () => {
  it('reads .mcp.json entries exactly as Claude Code writes them', () => {
    using project = tempProject();
    project.write('.mcp.json', {
      mcpServers: {
        fs: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '.'],
          env: { LOG: 'debug' },
        },
        remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
        old: { type: 'sse', url: 'https://old.example.com/sse' },
        untyped: { url: 'http://127.0.0.1:3000/mcp' },
      },
    });
    const config = project.load();
    const byName = Object.fromEntries(config.servers.map((s) => [s.name, s]));
    expect(byName.fs).toMatchObject({
      transport: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '.'],
      env: { LOG: 'debug' },
      cwd: project.dir,
      enabled: true,
      startupTimeoutMs: 30_000,
      callTimeoutMs: 60_000,
    });
    expect(byName.remote).toMatchObject({ transport: 'http', headers: { Authorization: 'Bearer x' } });
    expect(byName.old).toMatchObject({ transport: 'sse', url: 'https://old.example.com/sse' });
    expect(byName.untyped).toMatchObject({ transport: 'http' });
    expect(config.sources.map((s) => s.format)).toEqual(['mcp.json']);
  });

  it('takes tack.json over .mcp.json over the user file, per server name', () => {
    using project = tempProject();
    mkdirSync(project.home, { recursive: true });
    writeFileSync(
      join(project.home, 'config.json'),
      JSON.stringify({ mcpServers: { a: { command: 'user-a' }, u: { command: 'user-only' } } }),
    );
    project.write('.mcp.json', { mcpServers: { a: { command: 'mcpjson-a' }, b: { command: 'mcpjson-b' } } });
    project.write('tack.json', { mcpServers: { b: { command: 'tack-b', callTimeoutMs: 5 } } });
    const config = project.load();
    const commands = Object.fromEntries(
      config.servers.map((s) => [s.name, (s as StdioServerConfig).command]),
    );
    expect(commands).toEqual({ u: 'user-only', a: 'mcpjson-a', b: 'tack-b' });
    expect(config.servers.find((s) => s.name === 'b')?.callTimeoutMs).toBe(5);
    expect(config.sources.map((s) => s.scope)).toEqual(['user', 'project', 'project']);
  });

  it('finds the project files from a subdirectory', () => {
    using project = tempProject();
    project.write('tack.json', { mcpServers: { a: { command: 'x', cwd: 'tools' } } });
    const sub = join(project.dir, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    const config = loadConfig({ cwd: sub, env: project.env });
    expect(config.projectRoot).toBe(project.dir);
    expect((config.servers[0] as StdioServerConfig).cwd).toBe(join(project.dir, 'tools'));
  });

  it('uses exactly the --config file and nothing else', () => {
    using project = tempProject();
    project.write('.mcp.json', { mcpServers: { other: { command: 'x' } } });
    const file = project.write('custom.json', { mcpServers: { mine: { command: 'y' } } });
    const config = loadConfig({ cwd: project.dir, configFile: file, env: project.env });
    expect(config.servers.map((s) => s.name)).toEqual(['mine']);
  });

  it('expands ${VAR} and ${VAR:-default} in command, args, env, url and headers', () => {
    using project = tempProject();
    project.write('tack.json', {
      mcpServers: {
        s: { command: '${BIN}', args: ['--root', '${ROOT:-/srv}'], env: { TOKEN: '${SECRET}' } },
        h: {
          type: 'http',
          url: '${BASE:-http://127.0.0.1:9}/mcp',
          headers: { Authorization: 'Bearer ${SECRET}' },
        },
      },
    });
    const config = loadConfig({
      cwd: project.dir,
      env: { ...project.env, BIN: 'node', SECRET: 's3', ROOT: '' },
    });
    const s = config.servers[0] as StdioServerConfig;
    const h = config.servers[1] as HttpServerConfig;
    expect([s.command, s.args, s.env]).toEqual(['node', ['--root', '/srv'], { TOKEN: 's3' }]);
    expect([h.url, h.headers]).toEqual(['http://127.0.0.1:9/mcp', { Authorization: 'Bearer s3' }]);
  });

  it('names the file, the JSON path and what was expected', () => {
    using project = tempProject();
    project.write('tack.json', { mcpServers: { docs: { type: 'http', url: 'localhost:3000' } } });
    const error = configError(() => project.load());
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toBe('tack.json: mcpServers.docs.url: expected a URL, got "localhost:3000"');
    expect(error.subject).toMatchObject({ path: 'mcpServers.docs.url' });
    expect(error.hint).toMatch(/no server was started/);
  });

  it('shows a file outside the working directory by its absolute path', () => {
    using project = tempProject();
    const issue = { file: join(project.dir, 'tack.json'), path: 'mcpServers.docs.url', message: 'x' };
    expect(formatIssue(issue, project.dir)).toBe('tack.json: mcpServers.docs.url: x');
    expect(formatIssue(issue, join(project.dir, 'elsewhere'))).toBe(`${issue.file}: mcpServers.docs.url: x`);
  });

  it('collects every problem of every file in one error', () => {
    using project = tempProject();
    project.write('.mcp.json', { mcpServers: { 'bad name': { command: 'x' } } });
    project.write('tack.json', {
      mcpServers: {
        a: { command: 42 },
        b: { command: 'x', args: ['ok', 7] },
        c: { command: 'x', startupTimeoutMs: -1 },
        d: { type: 'websocket', url: 'ws://x' },
        e: { foo: 1 },
        f: { command: 'x', env: { K: '${NOPE_NOT_SET}' } },
        g__h: { command: 'x' },
        i_: { command: 'x' },
      },
    });
    const error = configError(() => loadConfig({ cwd: project.dir, env: { TACK_HOME: project.home } }));
    const all = [error.message, ...error.details];
    expect(all).toEqual([
      '.mcp.json: mcpServers["bad name"]: server name "bad name" may only contain letters, digits, "_" and "-" (it becomes part of every tool name, mcp__<server>__<tool>)',
      'tack.json: mcpServers.a.command: expected a string, got 42',
      'tack.json: mcpServers.b.args[1]: expected a string, got 7',
      'tack.json: mcpServers.c.startupTimeoutMs: expected a number > 0, got -1',
      'tack.json: mcpServers.d.type: expected "stdio", "http" or "sse", got "websocket"',
      'tack.json: mcpServers.e: expected "command" (a stdio server) or "url" (an HTTP server)',
      'tack.json: mcpServers.f.env.K: uses ${NOPE_NOT_SET}, which is not set; set NOPE_NOT_SET or write ${NOPE_NOT_SET:-default}',
      'tack.json: mcpServers.g__h: server name "g__h" must not contain "__" (it becomes part of every tool name, mcp__<server>__<tool>)',
      'tack.json: mcpServers.i_: server name "i_" must not end with "_" (it becomes part of every tool name, mcp__<server>__<tool>)',
    ]);
  });

  it('reports invalid JSON with its line and column', () => {
    using project = tempProject();
    project.write('tack.json', '{\n  "mcpServers": {\n    "a": { "command": "x", }\n  }\n}\n');
    const error = configError(() => project.load());
    expect(error.message).toMatch(/tack\.json: invalid JSON: .* at line 3, column 28$/);
  });

  it('does not expand variables of a disabled server, and warns about unknown keys', () => {
    using project = tempProject();
    project.write('tack.json', {
      foo: true,
      mcpServers: { off: { command: '${UNSET_BIN}', enabled: false, disabled: true } },
    });
    const config = loadConfig({ cwd: project.dir, env: { TACK_HOME: project.home } });
    expect(config.servers[0]).toMatchObject({ name: 'off', enabled: false, command: '${UNSET_BIN}' });
    expect(config.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'foo: unknown key, ignored',
      'mcpServers.off.disabled: unknown key, ignored',
    ]);
  });

  it('keeps ${VAR} of an empty variable empty, and warns about references it cannot read', () => {
    using project = tempProject();
    project.write('tack.json', {
      mcpServers: {
        s: { command: 'x', args: ['[${EMPTY}]', '${TOKEN:oops}'], startupTimeoutMs: 99999999999 },
      },
    });
    const error = configError(() =>
      loadConfig({ cwd: project.dir, env: { TACK_HOME: project.home, EMPTY: '' } }),
    );
    expect(error.message).toBe(
      'tack.json: mcpServers.s.startupTimeoutMs: expected a number <= 86400000, got 99999999999',
    );
    project.write('tack.json', {
      mcpServers: { s: { command: 'x', args: ['[${EMPTY}]', '${TOKEN:oops}'] } },
    });
    const config = loadConfig({ cwd: project.dir, env: { TACK_HOME: project.home, EMPTY: '' } });
    expect((config.servers[0] as StdioServerConfig).args).toEqual(['[]', '${TOKEN:oops}']);
    expect(config.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'mcpServers.s.args[1]: ${TOKEN:oops} is not ${VAR} or ${VAR:-default}; it is passed on as written',
    ]);
  });

  it('locates JSON with trailing garbage', () => {
    using project = tempProject();
    project.write('tack.json', '{}\n}');
    const error = configError(() => project.load());
    expect(error.message).toMatch(/^tack\.json: invalid JSON: .* at line 2, column 1$/);
    expect(error.message).not.toMatch(/position/);
  });

  it('says when --config names a file that does not exist', () => {
    using project = tempProject();
    const error = configError(() =>
      loadConfig({ cwd: project.dir, configFile: 'nope.json', env: project.env }),
    );
    expect(error.code).toBe('CONFIG_UNREADABLE');
    expect(error.message).toContain('nope.json: cannot read the configuration file (ENOENT)');
  });
});

describe('skills folders', () => {
  it('resolves them against their file, expands ~ and ${VAR}, the project file first', () => {
    using project = tempProject();
    mkdirSync(project.home, { recursive: true });
    const user = resolvePaths(project.env).userConfigFile;
    mkdirSync(join(user, '..'), { recursive: true });
    writeFileSync(user, JSON.stringify({ skills: ['./mine'] }));
    project.write('tack.json', { skills: ['skills', '~/shared', '${TEAM_SKILLS}/x'] });
    const config = loadConfig({
      cwd: project.dir,
      env: { ...project.env, HOME: '/home/u', TEAM_SKILLS: '/opt/team' },
    });
    expect(config.skillFolders).toEqual([
      join(project.dir, 'skills'),
      '/home/u/shared',
      '/opt/team/x',
      join(user, '..', 'mine'),
    ]);
  });

  it('a wrong value names the file and the entry', () => {
    using project = tempProject();
    project.write('tack.json', { skills: 'skills' });
    expect(() => loadConfig({ cwd: project.dir, env: project.env })).toThrow(
      /tack\.json: skills: expected an array of folder paths, got "skills"/,
    );
  });
});

describe('knowledge', () => {
  it('resolves bundles and the sqlite database against their file; runtimes merge, the project file winning', () => {
    using project = tempProject();
    mkdirSync(project.home, { recursive: true });
    const user = resolvePaths(project.env).userConfigFile;
    mkdirSync(join(user, '..'), { recursive: true });
    writeFileSync(
      user,
      JSON.stringify({
        knowledge: {
          bundles: ['./kb'],
          runtimes: { sqlite: { database: 'user.db' }, postgres: { url: '${PG}' } },
        },
      }),
    );
    project.write('tack.json', {
      knowledge: {
        bundles: ['kb', { path: '~/finance', name: 'finance' }],
        runtimes: { sqlite: { database: 'shop.db' } },
      },
    });
    const config = loadConfig({
      cwd: project.dir,
      env: { ...project.env, HOME: '/home/u', PG: 'postgresql://x@h/db' },
    });
    expect(config.knowledge).toEqual({
      bundles: [
        { path: join(project.dir, 'kb') },
        { path: '/home/u/finance', name: 'finance' },
        { path: join(user, '..', 'kb') },
      ],
      runtimes: {
        sqlite: { database: join(project.dir, 'shop.db') },
        postgres: { url: 'postgresql://x@h/db' },
      },
    });
  });

  it('names the field of a wrong entry, and an unset variable', () => {
    using project = tempProject();
    project.write('tack.json', { knowledge: { bundles: [{ name: 'x' }] } });
    expect(() => loadConfig({ cwd: project.dir, env: project.env })).toThrow(
      'tack.json: knowledge.bundles[0]: expected a folder path, or { "path": "...", "name": "..." }',
    );
    project.write('tack.json', { knowledge: { runtimes: { postgres: { url: '${NOPE}' } } } });
    expect(() => loadConfig({ cwd: project.dir, env: project.env })).toThrow(
      /tack\.json: knowledge\.runtimes\.postgres\.url: uses \$\{NOPE\}, which is not set/,
    );
  });
});

describe('resolvePaths', () => {
  it('puts config and state under TACK_HOME when set', () => {
    expect(resolvePaths({ TACK_HOME: '/t', HOME: '/h' })).toEqual({
      configDir: '/t',
      userConfigFile: '/t/config.json',
      stateDir: '/t/state',
      logDir: '/t/state/logs',
      storeFile: '/t/state/tack.db',
    });
  });

  it('follows the XDG base directories otherwise', () => {
    expect(resolvePaths({ HOME: '/h' })).toMatchObject({
      userConfigFile: '/h/.config/tack/config.json',
      storeFile: '/h/.local/state/tack/tack.db',
    });
    expect(resolvePaths({ HOME: '/h', XDG_CONFIG_HOME: '/c', XDG_STATE_HOME: '/s' })).toMatchObject({
      userConfigFile: '/c/tack/config.json',
      logDir: '/s/tack/logs',
    });
  });
});
