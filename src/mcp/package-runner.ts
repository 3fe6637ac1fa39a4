import { basename } from 'node:path';

/**
 * Package runners: commands that download a server's code when it starts (`npx -y pkg`, `uvx pkg`, `docker run
 * image`). A server's identity is its command line, so `npx -y pkg` without a version runs whatever the registry
 * says is latest on the next start while every pin of its definitions holds. This reads, from the command line
 * alone, which package a runner fetches and whether the line fixes the version.
 */
export type PackageRunner = 'npx' | 'bunx' | 'pnpm dlx' | 'yarn dlx' | 'uvx' | 'docker';

/** The package a runner command fetches, as asked for on its command line, and whether that pins one build. */
export interface PackageRunnerSpec {
  runner: PackageRunner;
  /** The package (npm or PyPI name, git or tarball URL) or image repository, without its version or tag. */
  package: string;
  /** The spec as the command line gives it: `pkg`, `pkg@^1`, `pkg==1.2.3`, `image:tag`. */
  requested: string;
  /** `exact`: one version (`pkg@1.2.3`, `pkg==1.2.3`, a git commit); `digest`: an image digest; false: it may move. */
  pinned: 'exact' | 'digest' | false;
}

const EXACT_SEMVER = /^[=v]?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const COMMIT = /#[0-9a-f]{40}$/i;
const IMAGE_DIGEST = /@sha256:[0-9a-f]{64}$/i;

/** Flags of each runner that take the next argument as their value (`--flag=value` takes none). */
const NPX_VALUE_FLAGS = new Set([
  '-c',
  '--call',
  '--cache',
  '--registry',
  '--userconfig',
  '--prefix',
  '-w',
  '--workspace',
  '--loglevel',
  '--node-options',
  '--script-shell',
]);
const UVX_VALUE_FLAGS = new Set([
  '--with',
  '--with-editable',
  '--with-requirements',
  '-w',
  '--python',
  '-p',
  '--index',
  '--index-url',
  '-i',
  '--extra-index-url',
  '--default-index',
  '--find-links',
  '-f',
  '--directory',
  '--project',
  '--config-file',
  '--cache-dir',
  '--env-file',
  '--color',
  '--index-strategy',
  '--keyring-provider',
  '--resolution',
  '--prerelease',
  '--exclude-newer',
  '--python-platform',
  '--refresh-package',
  '--reinstall-package',
  '--upgrade-package',
  '-P',
]);
const DOCKER_GLOBAL_VALUE_FLAGS = new Set([
  '--context',
  '-c',
  '--host',
  '-H',
  '--config',
  '--log-level',
  '-l',
]);
const DOCKER_RUN_VALUE_FLAGS = new Set([
  '-e',
  '--env',
  '--env-file',
  '-v',
  '--volume',
  '--mount',
  '-p',
  '--publish',
  '-w',
  '--workdir',
  '-u',
  '--user',
  '-l',
  '--label',
  '--label-file',
  '-m',
  '--memory',
  '-h',
  '--hostname',
  '--name',
  '--network',
  '--net',
  '--network-alias',
  '--entrypoint',
  '--platform',
  '--pull',
  '--cpus',
  '--cpu-shares',
  '-c',
  '--add-host',
  '--cap-add',
  '--cap-drop',
  '--device',
  '--dns',
  '--ipc',
  '--pid',
  '--restart',
  '--runtime',
  '--security-opt',
  '--shm-size',
  '--stop-signal',
  '--stop-timeout',
  '--tmpfs',
  '--ulimit',
  '--userns',
  '--uts',
  '--log-driver',
  '--log-opt',
  '--gpus',
  '--group-add',
  '--cidfile',
  '--ip',
  '--ip6',
  '--mac-address',
  '--expose',
  '--link',
  '--volumes-from',
  '--cgroupns',
  '--cgroup-parent',
  '--health-cmd',
  '--health-interval',
  '--health-retries',
  '--health-timeout',
  '--memory-swap',
  '--pids-limit',
  '--storage-opt',
  '--sysctl',
  '--attach',
  '-a',
]);

/**
 * The package a runner command fetches, or undefined when `command` is not a package runner (or runs local code:
 * `npx ./dir`). Flags before the package are skipped; arguments after it belong to the server.
 */
export function packageRunnerSpec(command: string, args: readonly string[]): PackageRunnerSpec | undefined {
  const program = basename(command).replace(/\.(?:cmd|exe|ps1)$/i, '');
  const sub = (words: readonly string[]) =>
    words.every((w, i) => args[i] === w) ? args.slice(words.length) : undefined;
  switch (program) {
    case 'npx':
      return npmSpec('npx', args, NPX_VALUE_FLAGS);
    case 'npm': {
      const rest = sub(['exec']) ?? sub(['x']);
      return rest && npmSpec('npx', rest, NPX_VALUE_FLAGS);
    }
    case 'bunx':
      return npmSpec('bunx', args, new Set());
    case 'bun': {
      const rest = sub(['x']);
      return rest && npmSpec('bunx', rest, new Set());
    }
    case 'pnpx':
      return npmSpec('pnpm dlx', args, new Set(['-c', '--shell-mode']));
    case 'pnpm': {
      const rest = sub(['dlx']);
      return rest && npmSpec('pnpm dlx', rest, new Set());
    }
    case 'yarn': {
      const rest = sub(['dlx']);
      return rest && npmSpec('yarn dlx', rest, new Set());
    }
    case 'uvx':
      return pythonSpec(args);
    case 'uv': {
      const rest = sub(['tool', 'run']);
      return rest && pythonSpec(rest);
    }
    case 'docker':
    case 'podman':
      return imageSpec(args);
    default:
      return undefined;
  }
}

/**
 * The `--package` (`-p`) values and the first positional argument: the runners of npm packages all name the
 * package either way, and stop reading their own flags at the first positional (the rest is the command's).
 */
export function runnerWords(
  args: readonly string[],
  valueFlags: ReadonlySet<string>,
  packageFlags: readonly string[] = ['--package', '-p'],
): { packages: string[]; positional: string | undefined } {
  const packages: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return { packages, positional: args[i + 1] };
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('-') && eq > 0 ? arg.slice(0, eq) : arg;
    if (packageFlags.includes(flag)) {
      const value = eq > 0 && flag !== arg ? arg.slice(eq + 1) : args[++i];
      if (value !== undefined) packages.push(value);
      continue;
    }
    if (arg.startsWith('-')) {
      if (flag === arg && valueFlags.has(arg)) i++;
      continue;
    }
    return { packages, positional: arg };
  }
  return { packages, positional: undefined };
}

function npmSpec(
  runner: PackageRunner,
  args: readonly string[],
  valueFlags: ReadonlySet<string>,
): PackageRunnerSpec | undefined {
  const { packages, positional } = runnerWords(args, valueFlags);
  const requested = packages[0] ?? positional;
  if (requested === undefined) return undefined;
  const parsed = parseNpmSpec(requested);
  return parsed && { runner, requested, ...parsed };
}

/** An npm package spec's name and whether it names one version; undefined for a local folder or file. */
export function parseNpmSpec(spec: string): Pick<PackageRunnerSpec, 'package' | 'pinned'> | undefined {
  if (/^(?:\.{1,2}(?:\/|$)|\/|~|file:)/.test(spec)) return undefined;
  if (/^(?:[a-z+]+:|[^@/][^/]*\/)/i.test(spec) && !spec.startsWith('npm:'))
    // git, tarball URLs and `user/repo`: pinned only by a full commit.
    return { package: spec.replace(/#.*$/, ''), pinned: COMMIT.test(spec) ? 'exact' : false };
  const at = spec.indexOf('@', 1);
  if (at === -1) return { package: spec, pinned: false };
  const range = spec.slice(at + 1);
  return { package: spec.slice(0, at), pinned: EXACT_SEMVER.test(range) ? 'exact' : false };
}

function pythonSpec(args: readonly string[]): PackageRunnerSpec | undefined {
  const { packages, positional } = runnerWords(args, UVX_VALUE_FLAGS, ['--from']);
  const requested = packages[0] ?? positional;
  if (requested === undefined || /^(?:\.{1,2}(?:\/|$)|\/|~|file:)/.test(requested)) return undefined;
  if (/^[a-z+]+:\/\//i.test(requested) || requested.startsWith('git+'))
    return {
      runner: 'uvx',
      package: requested.replace(/@[^@/]*$/, ''),
      requested,
      pinned: /@[0-9a-f]{40}$/i.test(requested) ? 'exact' : false,
    };
  const name = /^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(requested)?.[0] ?? requested;
  const rest = requested.slice(name.length).replace(/^\[[^\]]*\]/, '');
  // `pkg==1.2.3` and `pkg===1.2.3` (PEP 440), `pkg@1.2.3` (uvx's own form); a range or `@latest` may move.
  const pinned = /^(?:===?|@)\d[\w.+!-]*$/.test(rest) ? 'exact' : false;
  return { runner: 'uvx', package: name, requested, pinned };
}

function imageSpec(args: readonly string[]): PackageRunnerSpec | undefined {
  let i = 0;
  // Global flags, then `run` or `container run`.
  while (i < args.length && args[i]!.startsWith('-')) i += DOCKER_GLOBAL_VALUE_FLAGS.has(args[i]!) ? 2 : 1;
  if (args[i] === 'container') i++;
  if (args[i] !== 'run') return undefined;
  const { positional } = runnerWords(args.slice(i + 1), DOCKER_RUN_VALUE_FLAGS, []);
  if (positional === undefined) return undefined;
  if (IMAGE_DIGEST.test(positional))
    return {
      runner: 'docker',
      package: positional.replace(IMAGE_DIGEST, '').replace(/:[^:/]*$/, ''),
      requested: positional,
      pinned: 'digest',
    };
  // A tag (`:1.2.3` as much as `:latest`) can be moved to another image; only a digest names one.
  return {
    runner: 'docker',
    package: positional.replace(/:[^:/]*$/, ''),
    requested: positional,
    pinned: false,
  };
}

/**
 * The package specs npx installs for an `npx` (or `npm exec`) command line, as typed: the `--package` values, else
 * the command. npx names its cache folder after them (package-resolve.ts npxFolder).
 */
export function npxInstallSpecs(command: string, args: readonly string[]): string[] {
  const program = basename(command).replace(/\.(?:cmd|exe|ps1)$/i, '');
  const rest = program === 'npm' ? args.slice(1) : args;
  const { packages, positional } = runnerWords(rest, NPX_VALUE_FLAGS);
  return packages.length > 0 ? packages : positional ? [positional] : [];
}
