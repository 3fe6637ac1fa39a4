import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { serveHttp } from '../../src/servers/serve.js';
import { hostFetch } from '../helpers/team.js';

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
      // Node's fetch always sends the URL's host; hostFetch sends the name a proxy forwards.
      const post = (host: string) =>
        hostFetch(host)(served.url!, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
      // The proxied name passes the Host check; the token is then asked for. Any other name is refused first.
      expect((await post('tack.internal')).status).toBe(401);
      expect((await post('evil.example')).status).toBe(403);
      expect((await post('localhost')).status).toBe(401);
    } finally {
      await served.close();
    }
  });
});
