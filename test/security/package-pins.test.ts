import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { serverRows } from '../../src/console/catalog.js';
import { serverListing } from '../../src/console/listings.js';
import { hostDefinitions } from '../../src/mcp/definitions.js';
import type { McpHost } from '../../src/mcp/host.js';
import { npmCacheDir, npxFolder, resolvePackage } from '../../src/mcp/package-resolve.js';
import { HeldOnce, heldToolText, heldWhy } from '../../src/security/held.js';
import {
  DefinitionGuard,
  type PinnablePackage,
  pinDiff,
  type ServerDefinitions,
} from '../../src/security/pins.js';
import { startGateway } from '../../src/servers/gateway/start.js';
import { TackStore } from '../../src/store/store.js';
import type { TackWarning } from '../../src/util/warnings.js';
import { tack } from '../helpers/cli.js';
import { REPO, startHost, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const NAME = 'fixture-server';

interface Packed {
  version: string;
  tarball: Buffer;
  integrity: string;
  shasum: string;
}

/** `npm pack` of the dependency-free fixture server at `version`, made in `dir`. */
function pack(dir: string, version: string, env: Record<string, string | undefined>): Packed {
  const source = join(dir, `src-${version}`);
  mkdirSync(source);
  copyFileSync(join(REPO, 'test', 'fixtures', 'npm-package', 'server.cjs'), join(source, 'server.cjs'));
  writeFileSync(
    join(source, 'package.json'),
    JSON.stringify({ name: NAME, version, bin: { [NAME]: 'server.cjs' }, license: 'MIT' }),
  );
  const packed = spawnSync('npm', ['pack', '--silent', '--pack-destination', dir], {
    cwd: source,
    env,
    encoding: 'utf8',
  });
  expect(packed.status, packed.stderr).toBe(0);
  const tarball = readFileSync(join(dir, `${NAME}-${version}.tgz`));
  return {
    version,
    tarball,
    integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
    shasum: createHash('sha1').update(tarball).digest('hex'),
  };
}

/** A stand-in for the npm registry on 127.0.0.1: one packument, whose `latest` the test moves, and its tarballs. */
async function registry(versions: readonly Packed[]) {
  let latest = versions[0]!.version;
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (url === `/${NAME}`) {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          name: NAME,
          'dist-tags': { latest },
          versions: Object.fromEntries(
            versions.map((v) => [
              v.version,
              {
                name: NAME,
                version: v.version,
                bin: { [NAME]: 'server.cjs' },
                dist: {
                  tarball: `${base}/${NAME}/-/${NAME}-${v.version}.tgz`,
                  integrity: v.integrity,
                  shasum: v.shasum,
                },
              },
            ]),
          ),
        }),
      );
      return;
    }
    const tarball = versions.find((v) => url === `/${NAME}/-/${NAME}-${v.version}.tgz`)?.tarball;
    if (tarball) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(tarball);
      return;
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    publish(version: string) {
      latest = version;
    },
  };
}

/** npm's settings for a process that must reach only the stand-in registry and keep its cache in the project. */
function npmEnv(p: TempProject, registryUrl: string): Record<string, string> {
  const userconfig = join(p.dir, 'npmrc');
  writeFileSync(userconfig, '');
  return {
    npm_config_registry: registryUrl,
    npm_config_cache: join(p.dir, 'npm-cache'),
    npm_config_userconfig: userconfig,
    npm_config_offline: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'error',
  };
}

async function host(p: TempProject, env: Record<string, string>): Promise<McpHost> {
  const h = await startHost(p, {
    fx: { command: 'npx', args: ['-y', NAME], env, startupTimeoutMs: 60_000 },
  });
  scope.defer(() => h.close());
  return h;
}

describe('servers vetted: what a package runner ran is pinned', () => {
  it('records the version npx ran, and holds the tools when the next start brings another', async () => {
    const p = scope.project('tack-package-pins-');
    const packs = join(p.dir, 'packs');
    mkdirSync(packs);
    const packEnv = { ...process.env, npm_config_cache: join(p.dir, 'pack-cache') };
    const v1 = pack(packs, '1.0.0', packEnv);
    const v2 = pack(packs, '1.0.1', packEnv);
    const npm = await registry([v1, v2]);
    const env = npmEnv(p, npm.url);

    const first = await host(p, env);
    expect(first.servers()[0]?.status).toBe('connected');
    expect(first.connection('fx').package).toEqual({
      runner: 'npx',
      package: NAME,
      requested: NAME,
      pinned: false,
      source: 'npx-cache',
      version: '1.0.0',
      resolved: `${npm.url}${NAME}/-/${NAME}-1.0.0.tgz`,
      integrity: v1.integrity,
    });
    // Found where npm's own naming of npx folders puts it, not by the search through the others.
    expect(existsSync(join(npxFolder(env.npm_config_cache!, [NAME]), 'package-lock.json'))).toBe(true);
    const store = first.store!;
    const review = await new DefinitionGuard(store.pins).reviewAll(hostDefinitions(first));
    expect(review.held).toEqual([]);
    const identity = hostDefinitions(first)[0]!.identity;
    expect((await store.pins.get(identity, 'package', NAME))?.definition).toContain('"version":"1.0.0"');
    await first.close();

    // The registry's latest moves: the same command line runs other code at the next start.
    npm.publish('1.0.1');
    const second = await host(p, env);
    expect(second.connection('fx').package?.version).toBe('1.0.1');
    const guard = new DefinitionGuard(second.store!.pins);
    const { held } = await guard.reviewAll(hostDefinitions(second));
    const pkg = held.find((h) => h.kind === 'package');
    expect(pkg).toMatchObject({ server: 'fx', name: NAME, why: 'changed' });
    expect(pkg?.reason).toBe(`package ${NAME} changed since it was approved (1.0.0 -> 1.0.1)`);
    // The tool's definition is the same; the code behind it is not, so it is held with the package.
    const echo = held.find((h) => h.kind === 'tool' && h.name === 'echo');
    expect(echo?.via).toEqual({ kind: 'package', name: NAME });
    expect(heldToolText('fx__echo', echo!, 'gateway')).toContain('1.0.0 -> 1.0.1');
    const diff = await guard.diff(echo!);
    expect(diff).toContain('-  "version": "1.0.0"');
    expect(diff).toContain('+  "version": "1.0.1"');
    expect(diff).toContain(v2.integrity.slice(0, 30));
    const record = await second.store!.pins.get(identity, 'package', NAME);
    expect(pinDiff(record!)).toBe(diff);

    // The console's servers table and server page.
    expect(serverRows(second)[0]?.package).toEqual({
      label: `${NAME}@1.0.1`,
      runner: 'npx',
      requested: NAME,
      pinned: false,
      fix: `npx -y ${NAME}@1.0.1`,
    });
    expect(serverListing(second, 'fx', held).packageHeld).toBe(pkg?.reason);
    await second.close();

    // tack serve: the tools are not served, a call is answered with the versions, the hold is warned once.
    const warnings: TackWarning[] = [];
    const gateway = await startGateway({
      config: { ...p.load(), serve: { ...p.load().serve, token: 'gw-token' } },
      http: { port: 0 },
      onWarning: (w) => warnings.push(w),
    });
    scope.defer(() => gateway.close());
    const client = new Client({ name: 'downstream', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url!), {
        requestInit: { headers: { Authorization: 'Bearer gw-token' } },
      }),
    );
    scope.defer(() => client.close());
    expect((await client.listTools()).tools).toEqual([]);
    const refused = await client.callTool({ name: 'fx__echo', arguments: { text: 'hi' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain(
      `package ${NAME} changed since it was approved (1.0.0 -> 1.0.1)`,
    );
    expect(warnings.filter((w) => w.code === 'DEFINITION_HELD').map((w) => w.message)).toEqual([
      `held back: package ${NAME} changed since it was approved (1.0.0 -> 1.0.1) (server fx); review with \`tack pins diff fx\`, accept with \`tack pins accept fx\``,
    ]);

    // The CLI: the diff shows both versions, tack servers and tack scan say the command is unpinned.
    const cli = { cwd: p.dir, env: p.env };
    const shown = await tack(['pins', 'diff', 'fx'], cli);
    expect(shown.stdout).toContain('-  "version": "1.0.0"');
    expect(shown.stdout).toContain('+  "version": "1.0.1"');
    const servers = await tack(['servers'], cli);
    expect(servers.stdout).toContain(
      `fx: package ${NAME}@1.0.1 (npx) unpinned: \`${NAME}\` names no fixed version; a new release is held`,
    );
    expect(servers.stdout).toContain(`pin it: npx -y ${NAME}@1.0.1`);
    const scan = await tack(['scan', '--json'], cli);
    const reports = (JSON.parse(scan.stdout) as { tools: Array<Record<string, unknown>> }).tools;
    expect(reports.find((r) => r.kind === 'package')).toMatchObject({
      server: 'fx',
      name: NAME,
      verdict: 'warn',
      findings: [{ code: 'unpinned-package', severity: 'medium', match: NAME }],
    });
    expect(JSON.stringify(reports)).toContain(`Pin it: npx -y ${NAME}@1.0.1`);

    // Accepted from another terminal while the gateway runs: its tools are served again.
    const accepted = await tack(['pins', 'accept', 'fx'], cli);
    expect(accepted.stdout).toContain(`accepted package ${NAME} of fx`);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['fx__echo']);
    expect(
      JSON.stringify((await client.callTool({ name: 'fx__echo', arguments: { text: 'hi' } })).content),
    ).toContain('1.0.1: hi');
  }, 60_000);
});

describe('package pins in the guard', () => {
  const pkg = (over: Partial<PinnablePackage> = {}): PinnablePackage => ({
    runner: 'npx',
    package: 'srv',
    requested: 'srv',
    version: '1.0.0',
    integrity: 'sha512-AAAA',
    resolved: 'https://registry.example/srv/-/srv-1.0.0.tgz',
    ...over,
  });
  const server = (p: PinnablePackage | undefined): ServerDefinitions => ({
    server: 's',
    identity: 's stdio:npx -y srv',
    tools: [
      { name: 'a', description: 'A.' },
      { name: 'b', description: 'B.' },
    ],
    prompts: [{ name: 'p', description: 'P.' }],
    ...(p ? { package: p } : {}),
  });

  it('holds every tool and prompt with a changed integrity, names the change, and releases them with the package', async () => {
    const store = TackStore.open(':memory:');
    scope.defer(() => store.close());
    const guard = new DefinitionGuard(store.pins);
    expect((await guard.review(server(pkg()))).held).toEqual([]);
    // The same tarball from another URL is the same code.
    expect((await guard.review(server(pkg({ resolved: 'https://mirror/srv-1.0.0.tgz' })))).held).toEqual([]);
    // An npx server whose version can no longer be read (what ran may have removed its install record) is held.
    const unknown = await guard.review(server(pkg({ version: undefined, integrity: undefined })));
    expect(unknown.held.map((h) => h.kind)).toEqual(['package', 'tool', 'tool', 'prompt']);
    expect((await guard.review(server(undefined))).held).toEqual([]);

    const { held } = await guard.review(server(pkg({ integrity: 'sha512-BBBB' })));
    expect(held.map((h) => [h.kind, h.name, h.via?.name])).toEqual([
      ['package', 'srv', undefined],
      ['tool', 'a', 'srv'],
      ['tool', 'b', 'srv'],
      ['prompt', 'p', 'srv'],
    ]);
    expect(held[0]!.reason).toBe(
      'package srv changed since it was approved (1.0.0, integrity sha512-AAAA -> sha512-BBBB)',
    );
    // Said once, by the package; the model reads why without the package's name or versions.
    const once = new HeldOnce();
    expect(held.filter((h) => once.first(h)).map((h) => h.kind)).toEqual(['package']);
    expect(heldWhy(held[1]!)).toBe(
      "its server's package (the code behind it) changed since the user approved it",
    );
    expect(await guard.released(held)).toBe(false);
    await new DefinitionGuard(store.pins).accept(held[1]!);
    expect(await guard.released(held)).toBe(true);
    expect((await guard.review(server(pkg({ integrity: 'sha512-BBBB' })))).held).toEqual([]);
  });
});

describe('reading what npx ran', () => {
  it('reads a hostile install record as absent: a FIFO, a link to /dev/zero, a lock past the size cap', async () => {
    const p = scope.project('tack-npx-hostile-');
    const cache = join(p.dir, 'cache');
    const env = { npm_config_cache: cache };
    const lock = join(npxFolder(cache, ['srv']), 'package-lock.json');
    mkdirSync(join(lock, '..'), { recursive: true });
    const plant = [
      () => execFileSync('mkfifo', [lock]),
      () => symlinkSync('/dev/zero', lock),
      () => writeFileSync(lock, `{"pad":"${'x'.repeat(5 * 1024 * 1024)}"}`),
    ];
    for (const make of plant) {
      rmSync(lock, { force: true });
      make();
      // A FIFO read would wait forever, /dev/zero would fill memory: each comes back at once, version unknown.
      expect(await resolvePackage({ command: 'npx', args: ['-y', 'srv'], env })).toMatchObject({
        source: 'requested',
        requested: 'srv',
      });
    }
  });

  it('finds the cache where npm would, and a folder npm named otherwise by its lock', async () => {
    expect(npmCacheDir({ HOME: '/h' })).toBe('/h/.npm');
    expect(npmCacheDir({ HOME: '/h', NPM_CONFIG_CACHE: '/c' })).toBe('/c');
    expect(npmCacheDir({ HOME: '/h', npm_config_cache: '/c' }, ['--cache', '/d', 'x'])).toBe('/d');
    const p = scope.project('tack-npx-cache-');
    const cache = join(p.dir, 'cache');
    const folder = join(cache, '_npx', 'elsewhere');
    mkdirSync(join(folder, 'node_modules', '@s', 'srv'), { recursive: true });
    writeFileSync(
      join(folder, 'package-lock.json'),
      JSON.stringify({
        packages: {
          'node_modules/@s/srv': { version: '2.1.0', resolved: 'https://r/t.tgz', integrity: 'sha512-x' },
        },
      }),
    );
    const env = { npm_config_cache: cache };
    expect(await resolvePackage({ command: 'npx', args: ['-y', '@s/srv@^2', '--flag'], env })).toEqual({
      runner: 'npx',
      package: '@s/srv',
      requested: '@s/srv@^2',
      pinned: false,
      source: 'npx-cache',
      version: '2.1.0',
      resolved: 'https://r/t.tgz',
      integrity: 'sha512-x',
    });
    // Not in the cache: only the request is known; other runners are not read.
    expect(await resolvePackage({ command: 'npx', args: ['-y', 'other'], env })).toMatchObject({
      source: 'requested',
      requested: 'other',
    });
    expect(await resolvePackage({ command: 'uvx', args: ['tool==1.0'], env })).toEqual({
      runner: 'uvx',
      package: 'tool',
      requested: 'tool==1.0',
      pinned: 'exact',
      source: 'requested',
    });
    expect(await resolvePackage({ command: 'node', args: ['s.js'], env })).toBeUndefined();
  });
});
