import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { serveHttp } from '../../src/servers/serve.js';

/**
 * A loopback-bound instance accepts serve.allowedHosts so that a reverse proxy on the same machine can forward the
 * name clients use. That proxy reaches the instance from the network: without a token, anyone who reaches the proxy
 * would call every upstream with the instance's credentials. Refused at start, naming what to set.
 */
describe('hostile: a loopback instance exposed through a proxy without a token', () => {
  it('refuses allowed hosts on loopback without serve.token, and serves with one', async () => {
    const factory = () => new McpServer({ name: 'x', version: '1' });
    await expect(
      serveHttp(factory, { host: '127.0.0.1', allowedHosts: ['tack.internal'] }),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: 'refusing to serve on 127.0.0.1 for allowed hosts (tack.internal) without a bearer token',
      hint: expect.stringContaining('set serve.token'),
    });
    const served = await serveHttp(factory, {
      host: '127.0.0.1',
      allowedHosts: ['tack.internal'],
      token: 't',
    });
    try {
      const response = await fetch(served.url!, {
        method: 'POST',
        headers: { host: 'tack.internal', 'content-type': 'application/json' },
        body: '{}',
      });
      // The proxied name passes the Host check; the token is then asked for.
      expect(response.status).toBe(401);
    } finally {
      await served.close();
    }
  });
});
