import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { fixture } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const { project } = testScope();

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('tack mcp add | list | get | remove', () => {
  for (const [scope, fileOf] of [
    ['project', (dir: string) => join(dir, '.mcp.json')],
    ['tack', (dir: string) => join(dir, 'tack.json')],
    ['user', (_dir: string, home: string) => join(home, 'config.json')],
  ] as const) {
    it(`round-trips a server in scope ${scope}, keeping the rest of the file as it was`, async () => {
      const p = project();
      const file = fileOf(p.dir, p.home);
      mkdirSync(dirname(file), { recursive: true });
      // Four-space indentation, another server and a key tack does not know: all kept.
      writeFileSync(
        file,
        `${JSON.stringify({ mcpServers: { other: { command: 'keep-me', args: ['x'] } }, extra: { a: 1 } }, null, 4)}\n`,
      );
      const run = (args: string[]) => tack(args, { cwd: p.dir, env: p.env });

      const add = await run([
        'mcp',
        'add',
        '--scope',
        scope,
        '-e',
        'MODE=fast',
        'notes',
        '--',
        'node',
        'srv.js',
        '--flag',
      ]);
      expect(add.stderr).not.toContain('error');
      expect(add.stdout).toContain(`Added "notes" in ${file}`);
      expect(add.code).toBe(0);
      const text = readFileSync(file, 'utf8');
      expect(text).toContain('\n    "mcpServers"');
      expect(read(file)).toEqual({
        mcpServers: {
          other: { command: 'keep-me', args: ['x'] },
          notes: { command: 'node', args: ['srv.js', '--flag'], env: { MODE: 'fast' } },
        },
        extra: { a: 1 },
      });

      const list = await run(['mcp', 'list', '--json']);
      expect(list.code).toBe(0);
      const rows = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
      expect(rows.find((r) => r.name === 'notes')).toMatchObject({
        scope,
        file,
        transport: 'stdio',
        command: 'node',
        args: ['srv.js', '--flag'],
        state: 'ok',
      });
      const table = await run(['mcp', 'list']);
      expect(table.stdout).toMatch(/^NAME\s+TRANSPORT\s+COMMAND \/ URL\s+FILE\s+STATE$/m);
      expect(table.stdout).toMatch(
        new RegExp(`^notes\\s+stdio\\s+node srv.js --flag\\s+${file}\\s+ok$`, 'm'),
      );

      const get = await run(['mcp', 'get', 'notes', '--json']);
      expect(get.code).toBe(0);
      expect(JSON.parse(get.stdout)).toMatchObject({
        name: 'notes',
        file,
        entry: { command: 'node', args: ['srv.js', '--flag'], env: { MODE: 'fast' } },
        resolved: {
          transport: 'stdio',
          command: 'node',
          args: ['srv.js', '--flag'],
          cwd: join(file, '..'),
          env: ['MODE'],
        },
      });

      const remove = await run(['mcp', 'remove', 'notes']);
      expect(remove.stdout).toContain(`Removed "notes" from ${file}`);
      expect(remove.code).toBe(0);
      expect(read(file)).toEqual({
        mcpServers: { other: { command: 'keep-me', args: ['x'] } },
        extra: { a: 1 },
      });
    });
  }

  it('adds an http server with headers, and infers http from a lone URL', async () => {
    const p = project();
    const run = (args: string[]) => tack(args, { cwd: p.dir, env: { ...p.env, DOCS_TOKEN: 't' } });
    expect(
      (
        await run([
          'mcp',
          'add',
          '--transport',
          'sse',
          '-H',
          'X-Key: ${DOCS_TOKEN}',
          'legacy',
          'http://127.0.0.1:9/sse',
        ])
      ).code,
    ).toBe(0);
    expect((await run(['mcp', 'add', 'docs', 'https://example.com/mcp'])).code).toBe(0);
    expect(read(join(p.dir, 'tack.json')).mcpServers).toEqual({
      legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse', headers: { 'X-Key': '${DOCS_TOKEN}' } },
      docs: { type: 'http', url: 'https://example.com/mcp' },
    });
    const get = await run(['mcp', 'get', 'legacy']);
    expect(get.stdout).toMatch(/^\s+url\s+http:\/\/127\.0\.0\.1:9\/sse$/m);
    expect(get.stdout).toMatch(/^\s+headers\s+X-Key$/m);
  });

  it('defaults to .mcp.json when the project has one, else tack.json', async () => {
    const p = project();
    const run = (args: string[]) => tack(args, { cwd: p.dir, env: p.env });
    expect((await run(['mcp', 'add', 'a', '--', 'node', 'a.js'])).stdout).toContain(join(p.dir, 'tack.json'));
    p.write('.mcp.json', { mcpServers: {} });
    expect((await run(['mcp', 'add', 'b', '--', 'node', 'b.js'])).stdout).toContain(join(p.dir, '.mcp.json'));
    expect(Object.keys(read(join(p.dir, '.mcp.json')).mcpServers as object)).toEqual(['b']);
  });

  it('refuses a name that exists (unless --force), a bad name and a bad entry, saying what to do', async () => {
    const p = project();
    p.write('tack.json', { mcpServers: { notes: { command: 'old' } } });
    const before = readFileSync(join(p.dir, 'tack.json'), 'utf8');
    const run = (args: string[]) => tack(args, { cwd: p.dir, env: p.env });

    const dup = await run(['mcp', 'add', 'notes', '--', 'node', 'x.js']);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain(`error: ${join(p.dir, 'tack.json')}: a server named "notes" exists already`);
    expect(dup.stderr).toContain('add --force to replace it');

    const bad = await run(['mcp', 'add', 'my server', '--', 'node']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('server name "my server" may only contain letters, digits, "_" and "-"');
    const under = await run(['mcp', 'add', 'a__b', '--', 'node']);
    expect(under.stderr).toContain('must not contain "__"');

    const url = await run(['mcp', 'add', '--transport', 'http', 'web', 'localhost:3000']);
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('tack.json: mcpServers.web.url: expected a URL, got "localhost:3000"');
    const mixed = await run(['mcp', 'add', '-H', 'A: b', 'x', '--', 'node']);
    expect(mixed.stderr).toContain('-H/--header is for http and sse servers');
    const scope = await run(['mcp', 'add', '--scope', 'local', 'x', '--', 'node']);
    expect(scope.stderr).toContain('--scope: expected project, tack or user, got "local"');
    const env = await run(['mcp', 'add', '-e', 'NOVALUE', 'x', '--', 'node']);
    expect(env.stderr).toContain('-e/--env: expected KEY=value, got "NOVALUE"');
    expect(readFileSync(join(p.dir, 'tack.json'), 'utf8')).toBe(before);

    const force = await run(['mcp', 'add', '--force', 'notes', '--', 'node', 'new.js']);
    expect(force.stdout).toContain('Replaced "notes"');
    expect(read(join(p.dir, 'tack.json')).mcpServers).toEqual({
      notes: { command: 'node', args: ['new.js'] },
    });
  });

  it('refuses to edit a file that is not valid JSON, naming it', async () => {
    const p = project();
    p.write('tack.json', '{ "mcpServers": ');
    const run = await tack(['mcp', 'add', 'x', '--', 'node'], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: ${join(p.dir, 'tack.json')}: not valid JSON`);
    expect(readFileSync(join(p.dir, 'tack.json'), 'utf8')).toBe('{ "mcpServers": ');
  });

  it('warns before a credential goes into a project file as its value, and not for ${VAR}', async () => {
    const p = project();
    const run = (args: string[]) => tack(args, { cwd: p.dir, env: { ...p.env, GITHUB_TOKEN: 'x' } });
    const literal = await run([
      'mcp',
      'add',
      '-e',
      'GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz',
      'gh',
      '--',
      'node',
    ]);
    expect(literal.code).toBe(0);
    expect(literal.stderr).toContain('"gh": env GITHUB_TOKEN holds a credential');
    expect(literal.stderr).toContain("(-e GITHUB_TOKEN='${GITHUB_TOKEN}')");
    const reference = await run(['mcp', 'add', '-e', 'GITHUB_TOKEN=${GITHUB_TOKEN}', 'gh2', '--', 'node']);
    expect(reference.stderr).toBe('');
    const user = await run([
      'mcp',
      'add',
      '-s',
      'user',
      '-e',
      'GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz',
      'gh3',
      '--',
      'node',
    ]);
    expect(user.stderr).toBe('');
    // `get` does not print the credential back.
    const get = await run(['mcp', 'get', 'gh']);
    expect(get.stdout).not.toContain('ghp_0123456789abcdef');
  });

  it('remove asks which file when two define the name; list shows the shadowed one', async () => {
    const p = project();
    p.write('.mcp.json', { mcpServers: { twin: { command: 'from-mcp-json' } } });
    p.write('tack.json', { mcpServers: { twin: { command: 'from-tack-json' } } });
    const run = (args: string[]) => tack(args, { cwd: p.dir, env: p.env });
    const list = JSON.parse((await run(['mcp', 'list', '--json'])).stdout) as Array<Record<string, unknown>>;
    expect(list.map((r) => [r.command, r.state])).toEqual([
      ['from-mcp-json', 'shadowed'],
      ['from-tack-json', 'ok'],
    ]);
    const get = JSON.parse((await run(['mcp', 'get', 'twin', '--json'])).stdout) as Record<string, unknown>;
    expect(get).toMatchObject({ file: join(p.dir, 'tack.json'), shadowed: [join(p.dir, '.mcp.json')] });
    const ambiguous = await run(['mcp', 'remove', 'twin']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('"twin" is defined in 2 files');
    expect(ambiguous.stderr).toContain('--scope project or --scope tack');
    expect((await run(['mcp', 'remove', 'twin', '--scope', 'project'])).stdout).toContain(
      `Removed "twin" from ${join(p.dir, '.mcp.json')}`,
    );
    const missing = await run(['mcp', 'remove', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no server named "nope"');
  });

  it('list says a project server waits for `tack trust` while the project is not trusted', async () => {
    const p = project();
    const env = { ...p.env, TACK_TRUST_PROJECT: undefined };
    await tack(['mcp', 'add', 'notes', '--', 'node', 'x.js'], { cwd: p.dir, env });
    const list = await tack(['mcp', 'list'], { cwd: p.dir, env });
    expect(list.stdout).toMatch(/^notes\s+stdio\s+node x\.js\s+\S+tack\.json\s+waits for `tack trust`$/m);
  });

  it('a server added with `tack mcp add -- node <fixture>` is one `tack servers` connects to', async () => {
    const p = project();
    const add = await tack(['mcp', 'add', 'modern', '--', process.execPath, fixture('stdio-server.js')], {
      cwd: p.dir,
      env: p.env,
    });
    expect(add.code).toBe(0);
    const servers = await tack(['servers', '--json'], { cwd: p.dir, env: p.env });
    expect(servers.code).toBe(0);
    const rows = JSON.parse(servers.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((s) => [s.name, s.status])).toEqual([['modern', 'connected']]);
  });
});
