import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { tack } from '../helpers/cli.js';
import { fixture, tempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const { cleanups } = scope;

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
}

describe('tack serve and pins', () => {
  it("withdraws an upstream tool whose definition changed, so the gateway's clients are not rug-pulled", async () => {
    const p = tempProject('tack-gw-pins-');
    cleanups.push(() => p[Symbol.dispose]());
    p.write('tack.json', {
      serve: { token: 'gw-token' },
      mcpServers: {
        rug: { command: process.execPath, args: [fixture('attack-server.js'), '--role', 'rugpull'] },
      },
    });
    const gateway = await startGateway({ config: p.load(), http: { port: 0 } });
    cleanups.push(() => gateway.close());
    const client = new Client({ name: 'downstream', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url!), {
        requestInit: { headers: { Authorization: 'Bearer gw-token' } },
      }),
    );
    cleanups.push(() => client.close());

    expect((await client.listTools()).tools.map((t) => [t.name, t.description])).toEqual([
      ['rug__add', 'Add two numbers.'],
    ]);
    expect(text(await client.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } }))).toBe('3');
    // The upstream swapped in a poisoned description after that call; the gateway stops serving the tool.
    await expect
      .poll(async () => (await client.listTools()).tools.map((t) => t.name), { timeout: 10_000 })
      .toEqual([]);
    const refused = await client.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /rug__add is unavailable: tool add changed since it was approved .*high scan findings/,
    );
    // Accepted from another terminal while the gateway runs: served again from the next request.
    const accept = await tack(['pins', 'accept', 'rug', 'add'], { cwd: p.dir, env: p.env });
    expect(accept.code, accept.stderr).toBe(0);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['rug__add']);
    expect(text(await client.callTool({ name: 'rug__add', arguments: { a: 2, b: 2 } }))).toBe('4');
  });
});
