import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxNetworkRule } from '../../src/config/sandbox.js';
import { matches, type ProxyDecision, parseAuthority, startEgressProxy } from '../../src/sandbox/proxy.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

const rule = (written: string): SandboxNetworkRule => {
  const subdomains = written.startsWith('*.');
  const [host, port] = written.replace(/^\*\./, '').split(/:(?=\d+$)/) as [string, string];
  return { host, port: Number(port), subdomains, written, origin: 'test' };
};

/** An upstream on 127.0.0.1 that answers with the Host header it received. */
async function upstream(): Promise<{ port: number; hosts: string[] }> {
  const hosts: string[] = [];
  const server = createServer((req, res) => {
    hosts.push(req.headers.host ?? '');
    res.end(`host=${req.headers.host}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as { port: number }).port, hosts };
}

async function proxy(rules: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'tack-proxy-test-'));
  scope.defer(() => rmSync(dir, { recursive: true, force: true }));
  const decisions: ProxyDecision[] = [];
  const running = await startEgressProxy({
    rules: rules.map(rule),
    socketPath: join(dir, 'p.sock'),
    origin: 'network (tack.json)',
    onDecision: (d) => decisions.push(d),
  });
  scope.defer(() => running.close());
  /** Sends raw bytes over the Unix socket; resolves with everything the proxy wrote until it closed or went quiet. */
  const raw = (bytes: string, quietMs = 300) =>
    new Promise<string>((resolve) => {
      const socket = connect(running.socketPath);
      let out = '';
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        socket.destroy();
        resolve(out);
      };
      const quiet = () => {
        clearTimeout(timer);
        timer = setTimeout(done, quietMs);
      };
      socket.on('data', (chunk) => {
        out += chunk.toString();
        quiet();
      });
      socket.on('close', done);
      socket.on('error', done);
      socket.write(bytes);
      quiet();
    });
  return { raw, decisions };
}

describe("the sandbox's egress proxy", () => {
  it('matches host and port exactly; *.domain only its subdomains', () => {
    expect(matches(rule('api.example.com:443'), 'api.example.com', 443)).toBe(true);
    expect(matches(rule('api.example.com:443'), 'api.example.com', 80)).toBe(false);
    expect(matches(rule('*.example.com:443'), 'a.b.example.com', 443)).toBe(true);
    expect(matches(rule('*.example.com:443'), 'example.com', 443)).toBe(false);
    expect(matches(rule('*.example.com:443'), 'evilexample.com', 443)).toBe(false);
    expect(parseAuthority('[::1]:8080')).toEqual({ host: '[::1]', port: 8080 });
    expect(parseAuthority('API.Example.COM.:443')).toEqual({ host: 'api.example.com', port: 443 });
    for (const bad of [
      'example.com',
      'user@example.com:443',
      'example.com:0',
      'example.com:99999',
      'a b:1',
      '/x:1',
    ])
      expect(parseAuthority(bad), bad).toBeUndefined();
  });

  it('forwards an allowed plain request with the URL’s Host, refuses the rest, logs every decision', async () => {
    const up = await upstream();
    const { raw, decisions } = await proxy([`127.0.0.1:${up.port}`]);
    // A Host header naming another site on a shared address must not reach it: the URL decides.
    const ok = await raw(
      `GET http://127.0.0.1:${up.port}/x HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: Basic Zm9v\r\nConnection: close\r\n\r\n`,
    );
    expect(ok).toMatch(/^HTTP\/1\.1 200/);
    expect(ok).toContain(`host=127.0.0.1:${up.port}`);
    const refused = await raw(
      `GET http://localhost:${up.port}/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    expect(refused).toMatch(/^HTTP\/1\.1 403/);
    expect(refused).toContain(`localhost:${up.port} is not in the allow-list (network (tack.json))`);
    expect(up.hosts).toEqual([`127.0.0.1:${up.port}`]);
    expect(decisions.map((d) => `${d.allowed ? 'allow' : 'deny'} ${d.method} ${d.target}`)).toEqual([
      `allow GET 127.0.0.1:${up.port}`,
      `deny GET localhost:${up.port}`,
    ]);
  });

  it('tunnels an allowed CONNECT and refuses an unlisted one before any connection', async () => {
    const up = await upstream();
    const { raw, decisions } = await proxy([`localhost:${up.port}`]);
    const tunnel = await raw(
      `CONNECT localhost:${up.port} HTTP/1.1\r\nHost: localhost:${up.port}\r\n\r\nGET /in HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
    );
    expect(tunnel).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200/);
    const denied = await raw(`CONNECT 127.0.0.1:${up.port} HTTP/1.1\r\n\r\n`);
    expect(denied).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(up.hosts).toEqual(['localhost']);
    expect(decisions.map((d) => d.allowed)).toEqual([true, false]);
  });

  it('answers hostile input with 400 or 403 and stays up', async () => {
    const up = await upstream();
    const { raw, decisions } = await proxy([`127.0.0.1:${up.port}`]);
    const cases = [
      'CONNECT example.com HTTP/1.1\r\n\r\n', // no port
      `CONNECT user@127.0.0.1:${up.port} HTTP/1.1\r\n\r\n`, // userinfo
      `GET /relative HTTP/1.1\r\nHost: 127.0.0.1:${up.port}\r\n\r\n`, // origin form
      `GET https://127.0.0.1:${up.port}/ HTTP/1.1\r\n\r\n`, // https without CONNECT
      `GET http://u:p@127.0.0.1:${up.port}/ HTTP/1.1\r\n\r\n`, // credentials in the URL
      `GET http://127.0.0.1:${up.port}/ HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
      `GET http://127.0.0.1:${up.port}/ HTTP/1.1\r\nX: ${'a'.repeat(100_000)}\r\n\r\n`, // oversized header
      'NOT HTTP AT ALL\r\n\r\n',
    ];
    for (const bytes of cases)
      expect((await raw(bytes)).slice(0, 12), bytes.slice(0, 40)).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect(up.hosts).toEqual([]);
    // Only the well-formed upgrade reached a decision (refused); the rest never named a target.
    expect(decisions.map((d) => `${d.allowed} ${d.method}`)).toEqual(['false GET (upgrade)']);
    // Still serving.
    expect(
      await raw(`GET http://127.0.0.1:${up.port}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    ).toMatch(/^HTTP\/1\.1 200/);
  });
});
