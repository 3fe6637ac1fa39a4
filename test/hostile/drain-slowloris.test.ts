import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

/**
 * Slowloris clients against a drain: one trickles its headers, one its body, one sits idle on a kept-alive
 * connection. The drain must not wait for them past its timeout, and must not wait at all for the ones with no
 * request under way.
 */
describe('hostile: slowloris connections during a drain', () => {
  it('the drain ends within its timeout, cutting the request whose body never completes', async () => {
    using project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
    const gateway = await startGateway({ config: project.load(), http: { port: 0 } });
    const port = Number(new URL(gateway.url!).port);
    const sockets: Socket[] = [];
    const open = () =>
      new Promise<Socket>((resolve) => {
        const s = connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => {});
        sockets.push(s);
      });
    const timers: NodeJS.Timeout[] = [];
    try {
      const slowHeaders = await open();
      slowHeaders.write('POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n');
      timers.push(setInterval(() => slowHeaders.write('x-a: b\r\n'), 200));
      const slowBody = await open();
      slowBody.write(
        'POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
          'accept: application/json, text/event-stream\r\ncontent-length: 100000\r\n\r\n{',
      );
      timers.push(setInterval(() => slowBody.write(' '), 200));
      const idle = await open();
      idle.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      await new Promise((resolve) => setTimeout(resolve, 500));

      const started = Date.now();
      const drained = await gateway.drain(1_500);
      const took = Date.now() - started;
      expect(drained).toEqual({ finished: 0, cut: 1 });
      // The drain timeout, and room for closing the upstreams on a loaded machine.
      expect(took).toBeLessThan(10_000);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
    }
  }, 30_000);
});
