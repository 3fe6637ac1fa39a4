import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { freePort } from '../helpers/processes.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/**
 * nginx (Debian's package; .ci/run installs it) in front of two `tack serve --http` instances on one PostgreSQL
 * store, configured as docs/deploy.md says: 2026-07-28 requests spread over both, a 2025-era session stays on the
 * instance that opened it, and the audit log has every call once.
 */
describe('two instances behind nginx', () => {
  let postgres: Postgres;
  let project: TempProject;
  let nginx: ChildProcess | undefined;
  let dir: string;
  let url: string;
  const instances: RunningGateway[] = [];

  beforeAll(async () => {
    if (!NGINX)
      throw new Error('nginx was not found: install it with `apt-get install nginx` (.ci/run does so)');
    postgres = await startPostgres('tack_nginx');
    project = tempProject();
    project.write('tack.json', {
      // Each instance's stdio upstream says which instance it belongs to.
      mcpServers: { fx: fixtureEntry('stdio-server.js', [], { env: { TACK_INSTANCE: '${TACK_INSTANCE}' } }) },
    });
    project.env.TACK_STORE_URL = postgres.connectionString;
    for (const name of ['a', 'b']) {
      project.env.TACK_INSTANCE = name;
      const config = project.load();
      instances.push(
        await startGateway({
          config: { ...config, serve: { ...config.serve, instance: name } },
          http: { port: 0 },
        }),
      );
    }
    dir = mkdtempSync(join(tmpdir(), 'tack-nginx-'));
    const port = await freePort();
    const hosts = instances.map((i) => new URL(i.url!).host);
    const upstreams = hosts.map((host) => `    server ${host} max_fails=2 fail_timeout=5s;`);
    writeFileSync(
      join(dir, 'nginx.conf'),
      [
        ...(process.getuid?.() === 0 ? ['user root;'] : []),
        'worker_processes 1;',
        `pid ${dir}/nginx.pid;`,
        `error_log ${dir}/error.log warn;`,
        'events { worker_connections 256; }',
        'http {',
        '  access_log off;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`),
        // docs/deploy.md: a 2025-era session goes to the instance named in its id; anything else to any instance.
        '  map $http_mcp_session_id $tack_backend {',
        '    default tack;',
        ...hosts.map((host, i) => `    ~^${['a', 'b'][i]}\\. ${host};`),
        '  }',
        '  upstream tack {',
        ...upstreams,
        '  }',
        '  server {',
        `    listen 127.0.0.1:${port};`,
        '    location /mcp {',
        '      proxy_pass http://$tack_backend;',
        '      proxy_http_version 1.1;',
        '      proxy_set_header Host $http_host;',
        '      proxy_set_header Connection "";',
        '      proxy_buffering off;',
        '      proxy_read_timeout 1h;',
        '      proxy_next_upstream error timeout http_503;',
        '    }',
        '    location = /readyz { proxy_pass http://tack; proxy_set_header Host $http_host; }',
        '  }',
        '}',
      ].join('\n'),
    );
    nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
      stdio: 'ignore',
    });
    url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const up = await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (up) break;
      if (i > 100)
        throw new Error(
          `nginx did not come up: ${readFileSync(join(dir, 'error.log'), 'utf8').slice(-2000)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 120_000);

  afterAll(async () => {
    nginx?.kill('SIGTERM');
    for (const instance of instances) await instance.close().catch(() => {});
    project?.[Symbol.dispose]();
    await postgres?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const instanceOf = (result: { structuredContent?: unknown }): string =>
    (result.structuredContent as { env: Record<string, string> }).env.TACK_INSTANCE ?? '?';

  it('spreads 2026-07-28 calls over both instances, and audits each call once', async () => {
    const client = new Client({ name: 'spread', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    try {
      expect(client.getProtocolEra()).toBe('modern');
      const seen: string[] = [];
      for (let i = 0; i < 24; i++)
        seen.push(instanceOf(await client.callTool({ name: 'fx__env', arguments: {} })));
      expect(new Set(seen)).toEqual(new Set(['a', 'b']));
      const rows = (await instances[0]!.host.store!.audit.recent(500)).filter(
        (e) => e.tool === 'env' && e.client.startsWith('spread@'),
      );
      expect(rows).toHaveLength(24);
    } finally {
      await client.close();
    }
  });

  it('keeps a 2025-era session on the instance that opened it', async () => {
    for (let n = 0; n < 3; n++) {
      const client = new Client({ name: `legacy-${n}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      try {
        expect(client.getProtocolEra()).toBe('legacy');
        const seen = new Set<string>();
        for (let i = 0; i < 6; i++)
          seen.add(instanceOf(await client.callTool({ name: 'fx__env', arguments: {} })));
        expect(seen.size).toBe(1);
      } finally {
        await client.close();
      }
    }
  });
});
