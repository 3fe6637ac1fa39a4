import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

/** An untrusted project whose .mcp.json is broken, and a user config with a working server. */
function project(mcpJson: string) {
  const p = tempProject();
  delete p.env.TACK_TRUST_PROJECT;
  mkdirSync(p.home, { recursive: true });
  writeFileSync(
    join(p.home, 'config.json'),
    JSON.stringify({ mcpServers: { mine: fixtureEntry('stdio-server.js') } }),
  );
  mkdirSync(join(p.dir, '.git'));
  p.write('.mcp.json', mcpJson);
  return p;
}

describe('a broken .mcp.json in a project', () => {
  it('is a warning when the project is not trusted: every command works with the rest', async () => {
    for (const broken of ['{"mcpServers": {"x": ', '{"mcpServers": {"x": {"command": 42}}}']) {
      using p = project(broken);
      const servers = await tack(['servers', '--json'], { cwd: p.dir, env: p.env });
      expect(servers.code, servers.stderr).toBe(0);
      expect(servers.stderr).toMatch(
        /\.mcp\.json: .*ignored .*\.mcp\.json whole: the project is not trusted/,
      );
      const listed = JSON.parse(servers.stdout) as Array<{ name: string; status: string }>;
      expect(listed).toEqual([expect.objectContaining({ name: 'mine', status: 'connected' })]);
      const call = await tack(['call', 'mcp__mine__echo', '{"text": "fine"}'], { cwd: p.dir, env: p.env });
      expect(call.code).toBe(0);
      expect(call.stdout).toContain('fine');
    }
  }, 60_000); // four CLI runs starting servers: 6 s on CI, 14 s under heavy load

  it('is the configuration error it always was once the project is trusted', async () => {
    using p = project('{"mcpServers": {"x": {"command": 42}}}');
    const trusted = await tack(['servers'], { cwd: p.dir, env: { ...p.env, TACK_TRUST_PROJECT: '1' } });
    expect(trusted.code).toBe(2);
    expect(trusted.stderr).toMatch(/\.mcp\.json: mcpServers\.x\.command: /);
    const once = await tack(['servers', '--trust-project'], { cwd: p.dir, env: p.env });
    expect(once.code).toBe(2);
    expect(once.stderr).toMatch(/\.mcp\.json: mcpServers\.x\.command: /);
  });
});
