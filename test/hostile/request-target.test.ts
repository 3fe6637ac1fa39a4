import { connect } from 'node:net';
import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { startConsole } from '../../src/console/server.js';
import { serveHttp } from '../../src/servers/serve.js';
import { tempProject } from '../helpers/project.js';

/** One raw request line (a client library would not send these targets); the status code, 0 if the socket closed. */
function raw(port: number, requestLine: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`${requestLine}\r\nhost: 127.0.0.1\r\n\r\n`),
    );
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (status) {
        socket.destroy();
        resolve(Number(status[1]));
      }
    });
    socket.on('error', () => resolve(0));
    socket.on('close', () => resolve(0));
  });
}

/**
 * Request targets in absolute form that do not parse as URLs, sent before any token or Host check (the health
 * paths are routed first): each gets an answer, and the server goes on serving.
 */
describe('hostile: request targets that are not URLs', () => {
  it('are answered, and the instance keeps serving', async () => {
    const served = await serveHttp(() => new McpServer({ name: 'x', version: '1' }), { token: 't' });
    const port = Number(new URL(served.url!).port);
    try {
      for (const target of [
        'http://[/mcp',
        'http://%zz/readyz',
        'http://[::1/healthz',
        'http://a:99999999/mcp',
      ]) {
        const status = await raw(port, `GET ${target} HTTP/1.1`);
        expect([400, 401, 403, 404], `${target}: ${status}`).toContain(status);
      }
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      await served.close();
    }
  });

  it('tack console answers them too, and keeps serving', async () => {
    using project = tempProject();
    project.write('tack.json', { mcpServers: {} });
    const running = await startConsole({ config: project.load() });
    const port = Number(new URL(running.origin).port);
    try {
      for (const target of ['http://[/', 'http://%zz/api/servers']) {
        const status = await raw(port, `GET ${target} HTTP/1.1`);
        expect([400, 401, 403, 404], `${target}: ${status}`).toContain(status);
      }
      expect((await fetch(running.url)).status).toBe(200);
    } finally {
      await running.close();
    }
  });
});
