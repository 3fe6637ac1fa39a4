import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { freePort, SERVE_READY, type Service, startService } from './processes.js';

// Also built into dist/ for bench/team.ts, so the repository is found from either place (no vitest imported here).
const UP = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const REPO = basename(UP) === 'dist' ? dirname(UP) : UP;
const BIN = join(REPO, 'bin', 'tack.js');

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

/** The instance names docs/deploy.md's configuration routes by (its 2025-era session ids start `a.`, `b.`, `c.`). */
export const INSTANCE_NAMES = ['a', 'b', 'c'] as const;
/** The addresses docs/deploy.md gives its instances, in the order of INSTANCE_NAMES. */
const DOC_ADDRESSES = ['10.0.0.11:8080', '10.0.0.12:8080', '10.0.0.13:8080'];

function deployPage(): string {
  return readFileSync(join(REPO, 'docs', 'deploy.md'), 'utf8');
}

/**
 * docs/deploy.md's tack configuration (its ```json block) as written, with the database's address changed to
 * `storeUrl`'s host, port and database (its user, `tack`, and the `${TACK_DB_PASSWORD}` reference stay).
 */
export function tackConfigFromDocs(storeUrl: string): Record<string, unknown> {
  const block = /```json\n([\s\S]*?)```/.exec(deployPage())?.[1];
  if (!block) throw new Error('docs/deploy.md has no ```json block');
  const target = new URL(storeUrl);
  const address = 'db.internal:5432/tack';
  if (!block.includes(address)) throw new Error(`docs/deploy.md's tack configuration lacks ${address}`);
  return JSON.parse(block.replace(address, `${target.host}${target.pathname}`)) as Record<string, unknown>;
}

/**
 * A fetch that sends `host` as the Host header (the one docs/deploy.md's instances allow) while connecting to the
 * loopback address in the URL: Node's own fetch always sends the URL's host. Streams the body, for SSE answers.
 */
export function hostFetch(host: string): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const headers = Object.fromEntries(new Headers(init?.headers));
      const req = request(
        url,
        { method: init?.method ?? 'GET', headers: { ...headers, host }, signal: init?.signal ?? undefined },
        (res) => {
          const out = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) out.append(name, v);
          const nullBody = res.statusCode === 204 || res.statusCode === 304 || init?.method === 'HEAD';
          resolve(
            new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status: res.statusCode ?? 502,
              headers: out,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(typeof init?.body === 'string' ? init.body : undefined);
    });
}

/**
 * docs/deploy.md's nginx configuration as written, with only its addresses changed to loopback ones: the three
 * instance addresses, and `listen 443 ssl` to a plain loopback port. Instances beyond `hosts.length` are dropped
 * line by line (a one- or two-instance deployment of the same file). Throws when the page no longer has what this
 * replaces, so the page and the test cannot drift apart.
 */
export function nginxConfigFromDocs(hosts: string[], listen: string, dir: string): string {
  const page = deployPage();
  const block = /```nginx\n([\s\S]*?)```/.exec(page)?.[1];
  if (!block) throw new Error('docs/deploy.md has no ```nginx block');
  let lines = block.split('\n');
  for (const [i, address] of DOC_ADDRESSES.entries()) {
    if (!lines.some((l) => l.includes(address)))
      throw new Error(`docs/deploy.md's nginx block lacks ${address}`);
    if (i >= hosts.length) {
      const name = INSTANCE_NAMES[i]!;
      // An instance that is not there: its line in the shared upstream, its map line and its own upstream go.
      lines = lines.filter(
        (l) => !l.trim().startsWith(`server ${address}`) && !new RegExp(`\\btack_${name}\\b`).test(l),
      );
    }
  }
  let text = lines.join('\n');
  // A backup line names the next instance; with fewer instances it may name one that is gone: the first takes it.
  for (const [i, address] of DOC_ADDRESSES.entries()) text = text.replaceAll(address, hosts[i] ?? hosts[0]!);
  if (!text.includes('listen 443 ssl;'))
    throw new Error("docs/deploy.md's nginx block lacks `listen 443 ssl;`");
  text = text.replace('listen 443 ssl;', `listen ${listen};`);
  return [
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    'worker_processes 1;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`),
    text,
    '}',
  ].join('\n');
}

export interface TeamInstance extends Service {
  name: string;
  /** host:port of the instance itself. */
  host: string;
}

export interface Team {
  /** The balancer's MCP endpoint. */
  url: string;
  instances: TeamInstance[];
  nginx: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `count` real `tack serve --http` processes (each its own stdio upstreams) on one PostgreSQL store, named as
 * docs/deploy.md says, behind nginx running that page's configuration. Ready when nginx answers /readyz.
 */
export async function startTeam(options: {
  count: number;
  cwd: string;
  configFile: string;
  /** TACK_STORE_URL for the instances; without it, the configuration file names the store. */
  storeUrl?: string;
  env: Record<string, string | undefined>;
}): Promise<Team> {
  if (!NGINX)
    throw new Error('nginx was not found: install it with `apt-get install nginx` (.ci/run does so)');
  const instances: TeamInstance[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'tack-team-'));
  let nginx: ChildProcess | undefined;
  const stop = async () => {
    if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
      // Its folder (pid file, temp paths) goes below: wait until it has let go of it.
      const gone = new Promise((resolve) => nginx!.once('exit', resolve));
      nginx.kill('SIGTERM');
      await gone;
    }
    await Promise.all(instances.map((i) => i.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.all(
      INSTANCE_NAMES.slice(0, options.count).map(async (name) => {
        // Port 0, and the address read off the ready line: a port found free first could be taken by another
        // test file before tack binds it.
        const service = await startService(
          process.execPath,
          [BIN, 'serve', '--http', '127.0.0.1:0', '--config', options.configFile],
          {
            env: {
              ...options.env,
              ...(options.storeUrl ? { TACK_STORE_URL: options.storeUrl } : {}),
              TACK_SERVE_INSTANCE: name,
              // The fixture servers report it, so a test sees which instance answered.
              TACK_INSTANCE: name,
            },
            cwd: options.cwd,
            ready: SERVE_READY,
            timeoutMs: 60_000,
          },
        );
        return { ...service, name, host: new URL(SERVE_READY.exec(service.output())![1]!).host };
      }),
    );
    instances.push(...started);
    const errorLog = () =>
      existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
    // nginx cannot take port 0 and say where it listens: a port found free is tried, and another when nginx
    // exits because a parallel test file bound that one meanwhile.
    let url = '';
    for (let attempt = 1; !url; attempt++) {
      const port = await freePort();
      writeFileSync(
        join(dir, 'nginx.conf'),
        nginxConfigFromDocs(
          instances.map((i) => i.host),
          `127.0.0.1:${port}`,
          dir,
        ),
      );
      const started = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
        stdio: 'ignore',
      });
      nginx = started;
      const exited = () => started.exitCode !== null || started.signalCode !== null;
      for (let i = 0; !exited(); i++) {
        // nginx's answer (its Server header), not another test's server that took the port meanwhile.
        const up = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.status === 200 && (r.headers.get('server') ?? '').startsWith('nginx'),
          () => false,
        );
        if (up && !exited()) {
          url = `http://127.0.0.1:${port}`;
          break;
        }
        if (i > 100) throw new Error(`nginx did not come up: ${errorLog().slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (!url && (attempt >= 3 || !/Address already in use/.test(errorLog())))
        throw new Error(`nginx exited at start: ${errorLog().slice(-2000)}`);
    }
    return { url: `${url}/mcp`, instances, nginx: nginx!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
