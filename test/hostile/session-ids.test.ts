import { connect } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/** One raw HTTP/1.1 request (headers as bytes, so a client library cannot clean them up); the status line's code. */
function raw(port: number, head: Buffer, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        Buffer.concat([head, Buffer.from(`content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)]),
      );
    });
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(0));
  });
}

/**
 * A 2025-era client forging Mcp-Session-Id values against an instance named `a`: another instance's prefix, a
 * guessed id with this instance's prefix, a huge value, bytes outside ASCII and control characters. Each is refused
 * (404 for an unknown session, 400/431 for a malformed request), no one reaches another client's session, and the
 * instance keeps serving its real sessions.
 */
describe('hostile: forged Mcp-Session-Id values', () => {
  let project: TempProject;
  let gateway: RunningGateway;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', {
      serve: { instance: 'a' },
      mcpServers: { fx: fixtureEntry('stdio-server.js') },
    });
    gateway = await startGateway({ config: project.load(), http: { port: 0 } });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close().catch(() => {});
    project?.[Symbol.dispose]();
  });

  it('are refused without touching a real session', async () => {
    const legacy = new Client(
      { name: 'victim', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url!));
    await legacy.connect(transport);
    const real = transport.sessionId!;
    expect(real).toMatch(/^a\./);
    const port = Number(new URL(gateway.url!).port);
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'fx__echo', arguments: { text: 'forged' } },
    });
    const head = (id: Buffer | string) =>
      Buffer.concat([
        Buffer.from(
          'POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
            'accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\nmcp-session-id: ',
        ),
        Buffer.from(id),
        Buffer.from('\r\n'),
      ]);
    const forged: Array<[string, Buffer | string]> = [
      ['another instance', real.replace(/^a\./, 'b.')],
      ['a guess with this prefix', `a.${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`],
      ['the real id with a suffix', `${real}x`],
      ['the real id in upper case', real.toUpperCase()],
      ['12 KB', `a.${'f'.repeat(12_000)}`],
      ['bytes past ASCII', Buffer.from([0x61, 0x2e, 0xff, 0xfe, 0x80])],
      ['a tab and DEL', `a.\t${real}\x7f`],
      ['a NUL', Buffer.from([0x61, 0x2e, 0x00, 0x61])],
      ['a bare CR', Buffer.from([0x61, 0x2e, 0x0d, 0x61])],
    ];
    for (const [what, id] of forged) {
      const status = await raw(port, head(id), call);
      expect([400, 404, 431], `${what}: ${status}`).toContain(status);
    }
    // Far past Node's header limit: refused by the server, not buffered.
    expect(await raw(port, head(`a.${'f'.repeat(100_000)}`), call)).toBe(431);

    // The victim's session is untouched and still serves.
    const result = await legacy.callTool({ name: 'fx__echo', arguments: { text: 'still-mine' } });
    expect(result.isError).toBeFalsy();
    expect(transport.sessionId).toBe(real);
    await legacy.close();
  }, 30_000);
});
