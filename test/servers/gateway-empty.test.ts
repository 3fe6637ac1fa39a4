import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

/**
 * Issue 29: a desktop host starts `tack serve` where it likes and shows neither tack's stderr nor its logs. A
 * gateway that serves nothing says why where the client sees it: its instructions.
 */
async function instructionsOf(cwd: string, home: string, args: string[] = []): Promise<string> {
  const client = new Client({ name: 'desktop-host', version: '1.0.0' });
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', TACK_HOME: home, HOME: home };
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve', ...args],
      cwd,
      env,
      stderr: 'ignore',
    }),
  );
  try {
    const { tools } = await client.listTools();
    expect(tools).toEqual([]);
    return client.getInstructions() ?? '';
  } finally {
    await client.close();
  }
}

describe('tack serve with nothing to serve', () => {
  it('names each server of an untrusted project and why it is not served, in the instructions', async () => {
    using project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
    const said = await instructionsOf(project.dir, project.home);
    expect(said).toContain('tack gateway in front of 0 MCP servers.');
    expect(said).toContain('- fx is not served: project not trusted: run `tack trust`');
  }, 30_000);

  it('says which files it read, from which folder, and the --config form, when no server is configured', async () => {
    using project = tempProject();
    const said = await instructionsOf(project.dir, project.home);
    expect(said).toContain('No MCP server is configured: tack found no configuration file');
    expect(said).toContain(`(project folder ${project.dir})`);
    expect(said).toContain('tack serve --config /path/to/tack.json');
  }, 30_000);
});
