import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { providerEnv, toolResults } from '../helpers/fake-provider.js';
import { fixtureEntry } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const MODEL = ['--model', 'anthropic:claude-sonnet-4-5'];
const { fake, project } = testScope();

describe('tack run without anyone to ask', () => {
  it('exits 4, names the refused calls and says how to allow them', async () => {
    const p = project('tack-refused-');
    p.write('tack.json', { mcpServers: { s: fixtureEntry('stdio-server.js') } });
    // Each run: first a call of the tool, then (once its result is in) an answer quoting what came back.
    const provider = await fake((request) => {
      const results = toolResults(request);
      return results.length === 0
        ? { toolCalls: [{ name: 'mcp__s__echo', input: { text: 'hi' } }] }
        : { text: `the tool said: ${results[0]!.content}` };
    });
    const env = { ...p.env, ...providerEnv(provider) };
    const run = await tack(['run', 'echo hi', ...MODEL], { cwd: p.dir, env });
    expect(run.code, run.stderr).toBe(4);
    expect(run.stderr).toContain('1 call was refused: nobody could be asked to approve it');
    expect(run.stderr).toMatch(/ {2}mcp__s__echo: nobody to ask/);
    expect(run.stderr).toContain('--approve auto-read-only');
    expect(run.stderr).toContain('{"permissions":{"allow":["mcp__s__echo"]}}');

    // The same task with the call allowed by a rule completes with 0.
    p.write('tack.json', {
      mcpServers: { s: fixtureEntry('stdio-server.js') },
      permissions: { allow: ['mcp__s__echo'] },
    });
    const allowed = await tack(['run', 'echo hi', ...MODEL], { cwd: p.dir, env });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/the tool said: <tool_result name="mcp__s__echo"[^>]*>\s*hi/);
    expect(allowed.stderr).not.toContain('refused');
  });
});
