import { describe, expect, it } from 'vitest';
import { npxInstallSpecs, packageRunnerSpec } from '../../src/mcp/package-runner.js';
import { pinnedCommand, unpinnedPackageFinding } from '../../src/security/package-pins.js';

describe('packageRunnerSpec', () => {
  it.each([
    // npx: bare, latest, ranges, with and without -y
    ['npx', ['-y', 'server-x'], 'server-x', 'server-x', false],
    ['npx', ['--yes', 'server-x@latest'], 'server-x', 'server-x@latest', false],
    ['npx', ['server-x@^1'], 'server-x', 'server-x@^1', false],
    ['npx', ['-y', 'server-x@~1.2'], 'server-x', 'server-x@~1.2', false],
    ['npx', ['-y', 'server-x@1.x'], 'server-x', 'server-x@1.x', false],
    ['npx', ['-y', 'server-x@1.2.3'], 'server-x', 'server-x@1.2.3', 'exact'],
    ['npx', ['-y', 'server-x@1.2.3-beta.1'], 'server-x', 'server-x@1.2.3-beta.1', 'exact'],
    // scoped packages, arguments after the package, flags before it
    ['npx', ['-y', '@scope/name@1.2.3', '--port', '1', '/tmp'], '@scope/name', '@scope/name@1.2.3', 'exact'],
    ['npx', ['-y', '@scope/name', '-y', 'x@1.0.0'], '@scope/name', '@scope/name', false],
    ['npx', ['--registry', 'http://r', '-y', '@s/n@2.0.0'], '@s/n', '@s/n@2.0.0', 'exact'],
    ['npx', ['--cache=/tmp/c', 'server-x@1.0.0'], 'server-x', 'server-x@1.0.0', 'exact'],
    ['npx', ['-y', '--', 'server-x@1.0.0', '--flag'], 'server-x', 'server-x@1.0.0', 'exact'],
    // --package names the package; the positional is its command
    ['npx', ['-y', '-p', '@s/pkg@1.0.0', 'bin-name', 'arg'], '@s/pkg', '@s/pkg@1.0.0', 'exact'],
    ['npx', ['--package=@s/pkg', 'bin-name'], '@s/pkg', '@s/pkg', false],
    ['/usr/local/bin/npx', ['-y', 'server-x'], 'server-x', 'server-x', false],
    ['npx.cmd', ['-y', 'server-x@3.0.0'], 'server-x', 'server-x@3.0.0', 'exact'],
    ['npm', ['exec', '-y', 'server-x@1.0.0'], 'server-x', 'server-x@1.0.0', 'exact'],
    // git without a commit moves; with one it does not
    ['npx', ['-y', 'github:user/repo'], 'github:user/repo', 'github:user/repo', false],
    [
      'npx',
      ['-y', `git+https://h/r.git#${'a'.repeat(40)}`],
      'git+https://h/r.git',
      `git+https://h/r.git#${'a'.repeat(40)}`,
      'exact',
    ],
    // the other npm runners
    ['bunx', ['server-x'], 'server-x', 'server-x', false],
    ['bunx', ['--bun', 'server-x@1.0.0'], 'server-x', 'server-x@1.0.0', 'exact'],
    ['pnpm', ['dlx', 'server-x'], 'server-x', 'server-x', false],
    ['pnpm', ['dlx', '--package=server-x@2.0.0', 'bin'], 'server-x', 'server-x@2.0.0', 'exact'],
    ['yarn', ['dlx', '-p', 'server-x', 'bin'], 'server-x', 'server-x', false],
    // uvx: PyPI specs
    ['uvx', ['mcp-server-fetch'], 'mcp-server-fetch', 'mcp-server-fetch', false],
    ['uvx', ['mcp-server-fetch==2025.1.1'], 'mcp-server-fetch', 'mcp-server-fetch==2025.1.1', 'exact'],
    ['uvx', ['mcp-server-fetch@0.6.2', '--x'], 'mcp-server-fetch', 'mcp-server-fetch@0.6.2', 'exact'],
    ['uvx', ['mcp-server-fetch@latest'], 'mcp-server-fetch', 'mcp-server-fetch@latest', false],
    ['uvx', ['--python', '3.12', 'pkg>=1.0'], 'pkg', 'pkg>=1.0', false],
    ['uvx', ['--from', 'pkg[cli]==1.0.0', 'pkg-cmd'], 'pkg', 'pkg[cli]==1.0.0', 'exact'],
    ['uv', ['tool', 'run', 'pkg'], 'pkg', 'pkg', false],
    // docker: a tag moves, a digest does not
    ['docker', ['run', '-i', '--rm', 'mcp/fetch'], 'mcp/fetch', 'mcp/fetch', false],
    ['docker', ['run', '-i', 'mcp/fetch:latest'], 'mcp/fetch', 'mcp/fetch:latest', false],
    [
      'docker',
      ['run', '-i', '--rm', '-e', 'TOKEN', '-v', '/a:/b', 'ghcr.io/o/img:1.2.3', 'serve'],
      'ghcr.io/o/img',
      'ghcr.io/o/img:1.2.3',
      false,
    ],
    [
      'docker',
      ['run', '-i', `localhost:5000/img@sha256:${'b'.repeat(64)}`],
      'localhost:5000/img',
      `localhost:5000/img@sha256:${'b'.repeat(64)}`,
      'digest',
    ],
    ['podman', ['run', '--name=x', '-it', 'img:1'], 'img', 'img:1', false],
  ] as const)('%s %j', (command, args, pkg, requested, pinned) => {
    expect(packageRunnerSpec(command, args)).toMatchObject({ package: pkg, requested, pinned });
  });

  it('names the runner', () => {
    expect(packageRunnerSpec('npx', ['x'])?.runner).toBe('npx');
    expect(packageRunnerSpec('pnpm', ['dlx', 'x'])?.runner).toBe('pnpm dlx');
    expect(packageRunnerSpec('uvx', ['x'])?.runner).toBe('uvx');
    expect(packageRunnerSpec('docker', ['run', 'x'])?.runner).toBe('docker');
  });

  it('is undefined for other commands, local code and runners given no package', () => {
    expect(packageRunnerSpec('node', ['server.js'])).toBeUndefined();
    expect(packageRunnerSpec('npx', ['./local-server'])).toBeUndefined();
    expect(packageRunnerSpec('npx', ['-y'])).toBeUndefined();
    expect(packageRunnerSpec('uvx', ['/abs/path'])).toBeUndefined();
    expect(packageRunnerSpec('npm', ['start'])).toBeUndefined();
    expect(packageRunnerSpec('docker', ['ps'])).toBeUndefined();
    expect(packageRunnerSpec('pnpm', ['run', 'x'])).toBeUndefined();
  });

  it('says how to pin', () => {
    const spec = packageRunnerSpec('npx', ['-y', '@s/n'])!;
    expect(pinnedCommand({ ...spec, version: '1.4.0' })).toBe('npx -y @s/n@1.4.0');
    expect(pinnedCommand(spec)).toBe('npx -y @s/n@X.Y.Z');
    expect(pinnedCommand({ ...packageRunnerSpec('uvx', ['p'])!, version: '1.0' })).toBe('uvx p==1.0');
    const finding = unpinnedPackageFinding('srv', { ...spec, version: '1.4.0' });
    expect(finding).toMatchObject({ code: 'unpinned-package', severity: 'medium', match: '@s/n' });
    expect(finding?.message).toContain('Pin it: npx -y @s/n@1.4.0');
    expect(unpinnedPackageFinding('srv', packageRunnerSpec('npx', ['-y', '@s/n@1.0.0'])!)).toBeUndefined();
    expect(unpinnedPackageFinding('srv', packageRunnerSpec('docker', ['run', 'i:1'])!)?.message).toContain(
      'tag can be moved',
    );
  });

  it('lists the specs npx names its folder after', () => {
    expect(npxInstallSpecs('npx', ['-y', 'a@1', 'b'])).toEqual(['a@1']);
    expect(npxInstallSpecs('npx', ['-p', 'a', '--package=b@2', 'cmd'])).toEqual(['a', 'b@2']);
    expect(npxInstallSpecs('npm', ['exec', '-y', 'a'])).toEqual(['a']);
  });
});
