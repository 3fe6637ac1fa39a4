import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/servers/gateway/start.js';
import { startSkillsServer } from '../../src/servers/skills/start.js';
import { SkillLibrary } from '../../src/skills/library.js';
import { loadSkills } from '../../src/skills/load.js';
import { skillTools } from '../../src/skills/tools.js';
import { fixtureEntry, REPO, startHost, tempProject } from '../helpers/project.js';

const BIN = join(REPO, 'bin', 'tack.js');
const VALID = join(REPO, 'examples', 'skills', 'team');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('serving skills over MCP (the Skills extension)', () => {
  it('an MCP client lists, gets and reads them, verified by the SDK, over HTTP', async () => {
    const library = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [VALID] });
    const warnings: string[] = [];
    const server = await startSkillsServer({
      library,
      http: { port: 0 },
      onWarning: (w) => warnings.push(w),
    });
    cleanups.push(() => server.close());
    expect(server.uris).toEqual(['skill://commit-message/SKILL.md', 'skill://release-notes/SKILL.md']);

    const client = new Client({ name: 'other-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url!)));
    cleanups.push(() => client.close());
    const skills = new SkillsClient(client);
    expect(skills.supported).toBe(true);
    const { skills: entries } = await skills.list();
    const notes = entries.find((e) => e.frontmatter.name === 'release-notes')!;
    expect(notes.frontmatter.description).toMatch(/^Writes release notes from a git log/);
    const files = notes.resources === 'dynamic' ? [] : notes.resources.map((r) => r.uri).sort();
    expect(files).toContain('skill://release-notes/references/STYLE.md');
    expect(files).toContain('skill://release-notes/scripts/collect.sh');
    const manifest = await skills.read(notes);
    expect(manifest.verified).toBe(true);
    expect(manifest.body).toContain('# Release notes');
    const style = await skills.read(notes, 'references/STYLE.md');
    expect(style.text).toContain('Group by Added');

    // Hosts without the extension get the index in the instructions and two tools (never run_skill_script).
    expect(client.getInstructions()).toContain('<location>skill://release-notes/SKILL.md</location>');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['activate_skill', 'read_skill_file']);
    const activated = await client.callTool({ name: 'activate_skill', arguments: { name: 'release-notes' } });
    const text = (activated.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain('<skill name="release-notes" folder="skill://release-notes/">');
    expect(text).not.toContain(VALID); // no local path leaks to the remote host
    const refused = await client.callTool({
      name: 'read_skill_file',
      arguments: { name: 'release-notes', path: '../x' },
    });
    expect(refused.isError).toBe(true);
    expect(warnings).toEqual([]);
  });

  it('serves the others when one skill has a link back to its own folder and another a SKILL.md over the cap', async () => {
    using project = tempProject();
    const root = join(project.dir, 'skills');
    cpSync(VALID, root, { recursive: true });
    // references/up -> .. : the catalog walked references/up/references/up/... until the path was too long, and
    // refused every skill (tack serve and serve-skills did not start).
    symlinkSync('..', join(root, 'release-notes', 'references', 'up'));
    mkdirSync(join(root, 'huge'));
    writeFileSync(
      join(root, 'huge', 'SKILL.md'),
      `---\nname: huge\ndescription: A skill whose body is over the cap.\n---\n${'x'.repeat(1024 * 1024 + 10)}\n`,
    );
    const library = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [root] });
    const server = await startSkillsServer({ library, http: { port: 0 }, onWarning: () => {} });
    cleanups.push(() => server.close());
    expect(server.uris).toEqual(['skill://commit-message/SKILL.md', 'skill://release-notes/SKILL.md']);
    const client = new Client({ name: 'other-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url!)));
    cleanups.push(() => client.close());
    const { skills: entries } = await new SkillsClient(client).list();
    const notes = entries.find((e) => e.frontmatter.name === 'release-notes')!;
    const files = notes.resources === 'dynamic' ? [] : notes.resources.map((r) => r.uri);
    expect(files).toContain('skill://release-notes/references/STYLE.md');
    expect(files.some((uri) => uri.includes('/up/'))).toBe(false);
  });

  it("a connected server's skills join tack's index as <server>/<name>, activated and read over MCP", async () => {
    using project = tempProject();
    const folder = join(project.dir, 'served');
    cpSync(VALID, folder, { recursive: true });
    writeFileSync(join(project.dir, 'skills.json'), JSON.stringify({ skills: [folder] }));
    const host = await startHost(project, {
      team: {
        command: process.execPath,
        args: [BIN, 'serve-skills', '--config', join(project.dir, 'skills.json')],
      },
    });
    cleanups.push(() => host.close());
    // A local skill of the same name does not collide with the server's.
    const local = join(project.dir, 'local');
    mkdirSync(join(local, 'release-notes'), { recursive: true });
    writeFileSync(
      join(local, 'release-notes', 'SKILL.md'),
      '---\nname: release-notes\ndescription: Local notes. Use when asked for local notes.\n---\n# Local\n',
    );
    const library = await loadSkills({
      home: '/nonexistent',
      cwd: project.dir,
      config: { skillFolders: [local] },
      host,
    });
    expect(library.skills.map((s) => [s.name, s.scope])).toEqual([
      ['release-notes', 'config'],
      ['team/commit-message', 'server'],
      ['team/release-notes', 'server'],
    ]);
    const active = new Set<string>();
    const body = await library.activate('team/release-notes', active);
    expect(body.text).toContain('# Release notes');
    expect(body.text).toContain('references/STYLE.md');
    expect((await library.readFile('team/release-notes', 'references/STYLE.md')).text).toContain(
      'Group by Added',
    );
    await expect(library.readFile('team/release-notes', 'references/NOPE.md')).rejects.toThrow(
      /not one of the files the server lists/,
    );
    const index = await library.renderIndex({ countTokens: async (t) => t.length / 4 });
    expect(index.text).toContain('<name>team/release-notes</name>');

    const run = skillTools(library, { approve: () => true }).find((t) => t.name === 'run_skill_script')!;
    const refused = await run.execute({ name: 'team/release-notes', script: 'collect.sh' });
    expect(refused).toMatchObject({
      isError: true,
      text: expect.stringMatching(/comes from a server: its scripts are not run here/),
    });
  });
});

describe("tack serve offers tack's skills next to the upstreams", () => {
  it('over HTTP to a 2026-07-28 client: the Skills extension through the gateway, the upstream still there', async () => {
    using project = tempProject();
    project.write('tack.json', { mcpServers: { up: fixtureEntry('stdio-server.js') } });
    const library = await SkillLibrary.discover({ home: '/nonexistent', configFolders: [VALID] });
    const running = await startGateway({
      config: loadConfig({ cwd: project.dir, env: project.env }),
      http: { port: 0 },
      skills: library,
    });
    cleanups.push(() => running.close());
    const client = new Client(
      { name: 'other-host', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(running.url!)));
    expect(client.getProtocolEra()).toBe('modern');
    cleanups.push(() => client.close());
    const skills = new SkillsClient(client);
    expect(skills.supported).toBe(true);
    const { skills: entries } = await skills.list();
    expect(entries.map((e) => e.uri)).toEqual([
      'skill://commit-message/SKILL.md',
      'skill://release-notes/SKILL.md',
    ]);
    const notes = await skills.read(entries[1]!, 'references/STYLE.md');
    expect(notes.verified).toBe(true);
    expect(notes.text).toContain('Group by Added');
    const { skill } = await skills.get('skill://commit-message/SKILL.md');
    expect(skill.frontmatter.name).toBe('commit-message');
    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toContain('skill://{+path}');
    expect(client.getInstructions()).toMatch(/tack's own 2 Agent Skills/);
    // The upstream is unaffected.
    const echo = await client.callTool({ name: 'up__echo', arguments: { text: 'hi' } });
    expect((echo.content as Array<{ text: string }>)[0]!.text).toBe('hi');
    await expect(client.readResource({ uri: 'skill://ghost/SKILL.md' })).rejects.toThrow();
  });

  it("over stdio to a 2025-era client, from the tack serve command with the config's skills", async () => {
    using project = tempProject();
    project.write('tack.json', { skills: [VALID], mcpServers: { up: fixtureEntry('stdio-server.js') } });
    const client = new Client({ name: 'old-host', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve'],
        cwd: project.dir,
        env: { ...(project.env as Record<string, string>), HOME: project.home },
        stderr: 'pipe',
      }),
    );
    cleanups.push(() => client.close());
    expect(client.getProtocolEra()).toBe('legacy');
    const skills = new SkillsClient(client);
    const { skills: entries } = await skills.list();
    expect(entries.map((e) => e.frontmatter.name)).toEqual(['commit-message', 'release-notes']);
    const manifest = await skills.read(entries[0]!);
    expect(manifest.body).toContain('# Commit messages');
  });
});
