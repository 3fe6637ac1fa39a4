import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { isRecord } from '../util/is-record.js';
import { readRegularFile } from '../util/read-regular.js';
import { npxInstallSpecs, type PackageRunnerSpec, packageRunnerSpec } from './package-runner.js';

/**
 * What a package runner actually ran, as far as tack can see it after the server started: for npx, the version,
 * tarball URL and integrity npm recorded in its npx cache; for the other runners only what the command line asks
 * for (`source: 'requested'`), since their caches are not read.
 */
export interface ResolvedPackage extends PackageRunnerSpec {
  /** `npx-cache`: read from the folder npx installed into; `requested`: only the command line is known. */
  source: 'npx-cache' | 'requested';
  version?: string;
  /** The tarball URL npm fetched. */
  resolved?: string;
  /** npm's Subresource Integrity of the tarball (`sha512-…`). */
  integrity?: string;
}

const EN = new Intl.Collator('en');

/** Past this many folders in the npx cache, the search for one that names the package gives up. */
const MAX_NPX_FOLDERS = 500;

/**
 * The package a stdio server's command runs, resolved after it started. `env` is the environment the server was
 * spawned with (npx reads its cache location from it); undefined when the command is no package runner.
 */
export async function resolvePackage(server: {
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
}): Promise<ResolvedPackage | undefined> {
  const spec = packageRunnerSpec(server.command, server.args);
  if (!spec) return undefined;
  const requested: ResolvedPackage = { ...spec, source: 'requested' };
  if (spec.runner !== 'npx' || spec.package.includes(':') || /^[^@][^/]*\//.test(spec.package))
    return requested;
  try {
    const found = await fromNpxCache(
      spec,
      npxInstallSpecs(server.command, server.args),
      npmCacheDir(server.env, server.args),
    );
    return found ? { ...spec, source: 'npx-cache', ...found } : requested;
  } catch {
    // An unreadable cache says nothing about what ran: only the request is known.
    return requested;
  }
}

/** npm's cache folder for a process with `env`: `npm_config_cache` (any case, as npm reads it), else ~/.npm. */
export function npmCacheDir(env: Readonly<Record<string, string>>, args: readonly string[] = []): string {
  const flag = args.findIndex((a) => a === '--cache' || a.startsWith('--cache='));
  if (flag !== -1) {
    const arg = args[flag]!;
    const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[flag + 1];
    if (value) return resolve(value);
  }
  const key = Object.keys(env).find((k) => k.toLowerCase() === 'npm_config_cache');
  if (key && env[key]) return resolve(env[key]);
  return join(env.HOME || homedir(), '.npm');
}

/**
 * The folder npx installs `packages` into: libnpmexec names it by the first 16 hex digits of the SHA-512 of the
 * package specs as given (`--package` values, else the command), sorted and joined by newlines, under
 * `<cache>/_npx` (npm's `npxCache` is `<cache>/_npx`).
 */
export function npxFolder(cache: string, packages: readonly string[]): string {
  // npm sorts with localeCompare(…, 'en'): the same fixed-locale collation, so the folder name matches npm's.
  const key = [...packages].sort(EN.compare).join('\n');
  return join(cache, '_npx', createHash('sha512').update(key).digest('hex').slice(0, 16));
}

async function fromNpxCache(
  spec: PackageRunnerSpec,
  named: readonly string[],
  cache: string,
): Promise<Pick<ResolvedPackage, 'version' | 'resolved' | 'integrity'> | undefined> {
  const exact = await readInstall(npxFolder(cache, named), spec.package);
  if (exact) return exact;
  // Another npm may name its folders otherwise: the most recently written folder whose lock has the package.
  const root = join(cache, '_npx');
  const folders = (await readdir(root).catch(() => [])).slice(0, MAX_NPX_FOLDERS);
  const dated = await Promise.all(
    folders.map(async (f) => ({
      folder: join(root, f),
      at: (await stat(join(root, f, 'package-lock.json')).catch(() => undefined))?.mtimeMs ?? -1,
    })),
  );
  for (const { folder } of dated.filter((d) => d.at >= 0).sort((a, b) => b.at - a.at)) {
    const found = await readInstall(folder, spec.package);
    if (found) return found;
  }
  return undefined;
}

/** The package's entry in an npx folder's lock file (version, resolved, integrity), or its package.json. */
async function readInstall(
  folder: string,
  name: string,
): Promise<Pick<ResolvedPackage, 'version' | 'resolved' | 'integrity'> | undefined> {
  const lock = readJson(join(folder, 'package-lock.json'));
  const packages = isRecord(lock) && isRecord(lock.packages) ? lock.packages : undefined;
  const entry = packages?.[`node_modules/${name}`];
  const manifest = readJson(join(folder, 'node_modules', name, 'package.json'));
  const text = (record: unknown, key: string) =>
    isRecord(record) && typeof record[key] === 'string' ? record[key] : undefined;
  const version = text(entry, 'version') ?? text(manifest, 'version');
  if (version === undefined) return undefined;
  const resolved = text(entry, 'resolved');
  const integrity = text(entry, 'integrity');
  return { version, ...(resolved ? { resolved } : {}), ...(integrity ? { integrity } : {}) };
}

/** npm's lock of one npx folder is a few KB; past this it is not what npm wrote. */
const MAX_JSON_BYTES = 4 * 1024 * 1024;

/**
 * A JSON file of the npx cache, read as a regular file of bounded size (util/read-regular.ts). The cache is
 * writable by the package that just ran: a FIFO, a link to /dev/zero or a huge file there must neither hang nor fill
 * memory (it reads as absent, and an npx server whose version cannot be read is held when its pin had one: pins.ts).
 */
function readJson(file: string): unknown {
  try {
    return JSON.parse(readRegularFile(file, MAX_JSON_BYTES)) as unknown;
  } catch {
    return undefined;
  }
}

/** `pkg@1.2.3` (or the spec asked for, when no version was seen), for one line of a listing. */
export function packageLabel(p: ResolvedPackage): string {
  return p.version ? `${p.package}@${p.version}` : p.requested;
}
