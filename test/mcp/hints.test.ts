import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import type { McpHost } from '../../src/mcp/host.js';
import { fixtureEntry, startHost, type TempProject, tempProject } from '../helpers/project.js';

/** What the host says when a name is wrong: typed errors whose hints point at the right thing. */
describe('names the host does not know', () => {
  let project: TempProject;
  let host: McpHost;

  beforeAll(async () => {
    project = tempProject();
    host = await startHost(project, { modern: fixtureEntry('stdio-server.js') });
  });

  afterAll(async () => {
    await host?.close();
    project?.[Symbol.dispose]();
  });

  async function failure(promise: Promise<unknown>): Promise<TackError> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!TackError.isInstance(error)) throw new Error(`expected a TackError, got ${String(error)}`);
    return error;
  }

  it('an unlisted prompt is UNKNOWN_PROMPT, with the server’s prompts, not advice about tool schemas', async () => {
    const error = await failure(host.getPrompt('modern', 'gret'));
    expect(error.code).toBe('UNKNOWN_PROMPT');
    expect(error.message).toBe('server "modern" has no prompt named "gret"');
    expect(error.subject).toMatchObject({ server: 'modern' });
    expect(error.hint).toContain('Did you mean "greet"?');
    expect(error.hint).toContain('tack prompts --server modern');
    expect(error.hint).not.toMatch(/tool schema/);
  });

  it('a bare upstream tool name suggests its model-visible name', async () => {
    const bare = await failure(host.callTool('echo', { text: 'x' }));
    expect(bare.code).toBe('UNKNOWN_TOOL');
    expect(bare.hint).toContain('Did you mean "mcp__modern__echo"?');
    const typo = await failure(host.callTool('ecoh', { text: 'x' }));
    expect(typo.hint).toContain('"mcp__modern__echo"');
  });

  it('an unknown resource points at `tack resources`', async () => {
    const error = await failure(host.readResource('nosuch://x'));
    expect(error.code).toBe('UNKNOWN_RESOURCE');
    expect(error.hint).toContain('`tack resources`');
    expect(error.hint).not.toContain('`tack servers`');
  });
});
