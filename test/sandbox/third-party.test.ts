import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { EVERYTHING, startHost } from '../helpers/project.js';
import { countingServer, FAKE_KEY, fakeHome, LINUX } from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const FILESYSTEM = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);

const text = (result: CallToolResult) =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

describe.runIf(LINUX)('servers from npm, sandboxed with their documented needs', () => {
  it('server-everything runs read-only without network: its tools answer, its URL fetch has no route', async () => {
    const target = await countingServer(scope, 'page');
    const p = scope.project('tack-sandbox-npm-');
    const host = await startHost(p, {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], sandbox: 'read-only' },
    });
    scope.defer(() => host.close());
    expect(host.servers()[0]).toMatchObject({
      status: 'connected',
      sandbox: { state: 'enforced', network: 'off' },
    });
    expect(host.catalog.tools.length).toBeGreaterThan(5);
    const echo = (await host.callTool('mcp__everything__echo', { message: 'boxed' })) as CallToolResult;
    expect(text(echo)).toBe('Echo: boxed');
    // A data: URL needs no network; an http one does.
    const local = (await host.callTool('mcp__everything__gzip-file-as-resource', {
      name: 'a.gz',
      data: 'data:text/plain;base64,aGVsbG8=',
      outputType: 'resource',
    })) as CallToolResult;
    expect(local.isError).toBeFalsy();
    const remote = await host
      .callTool('mcp__everything__gzip-file-as-resource', {
        name: 'b.gz',
        data: `http://127.0.0.1:${target.port}/file`,
        outputType: 'resource',
      })
      .then(
        (result) => text(result as CallToolResult),
        (error: Error) => error.message,
      );
    expect(remote).toMatch(/fetch failed|ECONNREFUSED/);
    expect(target.requests).toEqual([]);
  });

  it('server-filesystem writes the workspace; a folder it is told to serve but the sandbox hides stays hidden', async () => {
    const p = scope.project('tack-sandbox-npm-');
    const { home, key } = fakeHome(scope);
    p.env.HOME = home;
    const entry = (sandbox?: unknown) => ({
      command: process.execPath,
      // Its documented need: the folders it serves, as arguments; here the workspace and the home folder.
      args: [FILESYSTEM, p.dir, home],
      ...(sandbox === undefined ? {} : { sandbox }),
    });
    const host = await startHost(p, { fs: entry({ write: ['${workspace}'] }), open: entry() });
    scope.defer(() => host.close());
    expect(host.servers().map((s) => s.status)).toEqual(['connected', 'connected']);
    const call = async (server: string, tool: string, args: Record<string, unknown>) =>
      (await host.callTool(`mcp__${server}__${tool}`, args)) as CallToolResult;

    const written = await call('fs', 'write_file', { path: join(p.dir, 'from-fs.txt'), content: 'hello' });
    expect(written.isError).toBeFalsy();
    expect(readFileSync(join(p.dir, 'from-fs.txt'), 'utf8')).toBe('hello');
    // The control: the unsandboxed server serves the key, as it was told to.
    expect(text(await call('open', 'read_text_file', { path: key }))).toBe(FAKE_KEY);
    const hidden = await call('fs', 'read_text_file', { path: key });
    expect(hidden.isError).toBe(true);
    expect(text(hidden)).not.toContain('PRIVATE KEY');
  });
});
