import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { fixture, startHost, tempProject } from '../helpers/project.js';

const HOSTILE = { command: process.execPath, args: [fixture('hostile-server.js')] };

describe('a server whose results nest too deeply', () => {
  it('tack call answers with an error naming the limit, at any depth, and never hangs', async () => {
    using project = tempProject();
    project.config({ hostile: HOSTILE });
    for (const [depth, shape] of [
      [100, 'structured'],
      [5_000, 'content'],
      [20_000, 'structured'],
      [20_000, 'result'],
    ] as const) {
      const run = await tack(['call', 'mcp__hostile__deep_result', JSON.stringify({ depth, shape })], {
        cwd: project.dir,
        env: project.env,
      });
      expect(run.code, `${depth} ${shape}: ${run.stderr}`).toBe(1);
      expect(run.stderr).toMatch(/the answer is nested deeper than 64 levels \(limits\.jsonDepth\)/);
      expect(run.stderr).not.toMatch(/unexpected failure|RangeError/);
    }
    // A configured limit is the limit.
    project.write('tack.json', { limits: { jsonDepth: 200 }, mcpServers: { hostile: HOSTILE } });
    const allowed = await tack(
      ['call', 'mcp__hostile__deep_result', '{"depth": 100, "shape": "structured"}'],
      {
        cwd: project.dir,
        env: project.env,
      },
    );
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('bottom');
  }, 60_000);

  it('fails the one request: the connection stays up and the next call works', async () => {
    using project = tempProject();
    const host = await startHost(project, { hostile: HOSTILE });
    try {
      const refused = await host
        .callTool('mcp__hostile__deep_result', { depth: 20_000, shape: 'content' })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'LIMIT_EXCEEDED', subject: { server: 'hostile' } });
      expect(host.servers()[0]).toMatchObject({ status: 'connected', restarts: 0 });
      // Arguments too deep are refused before anything is sent.
      let deep: unknown = 'x';
      for (let i = 0; i < 100; i++) deep = [deep];
      const tooDeep = await host
        .callTool('mcp__hostile__echo', { text: deep })
        .catch((error: unknown) => error);
      expect(tooDeep).toMatchObject({
        code: 'LIMIT_EXCEEDED',
        message: expect.stringMatching(/nothing was sent/),
      });
      expect((await host.callTool('mcp__hostile__echo', { text: 'fine' })).content).toEqual([
        { type: 'text', text: 'fine' },
      ]);
      expect(host.servers()[0]).toMatchObject({ status: 'connected', restarts: 0 });
    } finally {
      await host.close();
    }
  });
});
