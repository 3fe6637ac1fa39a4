import { createHash } from 'node:crypto';
import { homedir, userInfo } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { expandVars } from './expand.js';
import type { TackPaths } from './paths.js';
import {
  BUILTIN_SANDBOX_PROFILES,
  NETWORK_RULE_PATTERN,
  type SandboxField,
  type SandboxPolicyEntry,
  type SandboxSettings,
} from './schema.js';

/**
 * Sandbox policies as tack.json writes them (a profile name, a policy object, false) resolved into what the
 * sandbox enforces: absolute paths, the network rule, and for every rule where it came from, so a refusal can
 * name the rule that caused it. Pure: no file is read and nothing is checked on disk here (symlinks are resolved
 * when the sandbox is built, see sandbox/bwrap.ts).
 */

/** One path rule: the path as it will be bound, as written, and the rule that named it. */
export interface SandboxPathRule {
  /** Absolute, `${workspace}`, `~` and `${VAR}` expanded; symlinks not resolved yet. */
  path: string;
  written: string;
  /** `profile workspace-write`, `mcpServers.fs.sandbox.write[0] (tack.json)`. */
  origin: string;
}

export interface SandboxNetworkRule {
  /** Lower case, without a trailing dot; an IPv6 literal keeps its brackets. */
  host: string;
  port: number;
  /** `*.example.com:443`: every subdomain of host (not host itself). */
  subdomains: boolean;
  written: string;
  origin: string;
}

/** A resolved policy: what the sandbox of one server (or of skill scripts) lets the process do. */
export interface SandboxPolicy {
  /** The profile it starts from (`read-only`, `workspace-write`, or a custom one). */
  profile: string;
  /** Where the policy was chosen: `mcpServers.fs.sandbox (tack.json)`, `tack's default for skill scripts`. */
  origin: string;
  /** false: no network; true: the host's; a list: only these, through tack's filtering proxy. */
  network: boolean | SandboxNetworkRule[];
  networkOrigin: string;
  read: SandboxPathRule[];
  write: SandboxPathRule[];
  /** The home folder is visible (read-only); false hides it except what read and write name. */
  home: boolean;
  homeOrigin: string;
  /** Without a supported sandbox: true refuses to start, false starts unsandboxed with a warning. */
  required: boolean;
  /** The project root: what `${workspace}` means. */
  workspace: string;
  /** The home folders hidden when `home` is false (the configured HOME and the account's), without `/`. */
  homes: string[];
  /** A writable folder of this process's own, kept between runs. */
  stateDir: string;
  /** tack's own configuration and state (its store holds OAuth tokens): hidden whatever the rules say. */
  hidden: string[];
  /**
   * Every folder some sandboxed process of the same configuration may write (each policy's `write` paths and state
   * folder): a link below one of them may have been planted there, so no path of this policy is resolved through
   * it. Filled in by the configuration loader; the workspace and this policy's own `write` paths always count.
   */
  writableBySandboxes?: string[];
}

export interface SandboxContext {
  workspace: string;
  env: Readonly<Record<string, string | undefined>>;
  paths: Pick<TackPaths, 'configDir' | 'stateDir'>;
}

/** Where a policy or a profile was written: the file and the JSON path inside it. */
export interface Declared<T> {
  value: T;
  file: string;
  path: string;
}

/** What skill scripts get when nothing is configured: the workspace writable, no network, preferred not required. */
export const DEFAULT_SKILL_SCRIPT_SANDBOX = 'workspace-write';

interface ChainLink {
  entry: SandboxPolicyEntry;
  origin(key: string): string;
  report(key: string, message: string): void;
}

/** The registries `npx`, `uvx` and `pipx run` fetch from: what the `package-runner` profile lets through. */
export const PACKAGE_REGISTRIES = ['registry.npmjs.org:443', 'pypi.org:443', 'files.pythonhosted.org:443'];

const BUILTIN: Record<string, SandboxPolicyEntry> = {
  'read-only': { read: ['${workspace}'], network: false, home: false },
  'workspace-write': { write: ['${workspace}'], network: false, home: false },
  // npx/uvx servers: the workspace read-only, the public registries through the proxy, and (sandboxEnvironment)
  // the runner's cache in the process's own state folder, so nothing of the home folder is needed.
  'package-runner': { read: ['${workspace}'], network: PACKAGE_REGISTRIES, home: false },
};

/**
 * Resolves policies against the profiles of every configuration file (merged, the more local file winning per
 * name). Problems are returned, not thrown, so the loader reports them with every other issue of the file.
 */
export class SandboxResolver {
  readonly #profiles: ReadonlyMap<string, Declared<SandboxPolicyEntry>>;
  readonly #context: SandboxContext;

  constructor(profiles: ReadonlyMap<string, Declared<SandboxPolicyEntry>>, context: SandboxContext) {
    this.#profiles = profiles;
    this.#context = context;
  }

  /**
   * The policy `field` declares for the process whose own state folder is `stateName`; undefined when it declares
   * none (`false`, `"none"`). `required` is what an entry that does not say gets.
   */
  resolve(
    field: Declared<SandboxField>,
    stateName: string,
    problems: Array<{ file: string; path: string; message: string }>,
    required = true,
  ): SandboxPolicy | undefined {
    const report = (path: string, message: string) => problems.push({ file: field.file, path, message });
    const value = field.value;
    if (value === false || value === 'none') return undefined;
    if (typeof value === 'object' && value.profile === 'none') {
      if (Object.keys(value).length > 1)
        report(`${field.path}.profile`, 'profile "none" means no sandbox; remove the other keys');
      return undefined;
    }
    const top: Declared<SandboxPolicyEntry> =
      typeof value === 'string' ? { ...field, value: { profile: value } } : { ...field, value };
    const chain = this.#chain(top, report);
    if (!chain) return undefined;
    const context = this.#context;
    // The configured HOME, tack's own, and the account's from the password database: os.homedir() is only $HOME
    // when that is set, and a HOME pointed elsewhere (sudo -E, CI, a wrapper) must not unhide the real one.
    const homes = [...new Set([context.env.HOME, homedir(), accountHome()])].filter(
      (home): home is string => typeof home === 'string' && home !== '' && resolve(home) !== '/',
    );
    const policy: SandboxPolicy = {
      profile: chain.profile,
      origin: originOf(field.path, field.file),
      network: false,
      networkOrigin: '',
      read: [],
      write: [],
      home: false,
      homeOrigin: '',
      required,
      workspace: context.workspace,
      homes: homes.map((home) => resolve(home)),
      // Per project too: a state folder (an npm cache) one project's server may write must not be what the same
      // name runs from in another project. `@` cannot be part of a server name, so no two folders meet.
      stateDir: join(context.paths.stateDir, 'sandbox', `${stateName}@${projectKey(context.workspace)}`),
      hidden: [context.paths.configDir, context.paths.stateDir],
    };
    // Base profile first: lists add up along the chain, a scalar set nearer the entry wins.
    for (const link of chain.links) {
      const entry = link.entry;
      const origin = (key: string) => link.origin(key);
      for (const kind of ['read', 'write'] as const)
        (entry[kind] ?? []).forEach((written, i) => {
          const path = this.#expandPath(written, (message) => link.report(`${kind}[${i}]`, message));
          if (path !== undefined) policy[kind].push({ path, written, origin: origin(`${kind}[${i}]`) });
        });
      if (entry.network !== undefined) {
        policy.network = Array.isArray(entry.network)
          ? entry.network.map((written, i) => networkRule(written, origin(`network[${i}]`)))
          : entry.network;
        policy.networkOrigin = origin('network');
      }
      if (entry.home !== undefined) {
        policy.home = entry.home;
        policy.homeOrigin = origin('home');
      }
      if (entry.required !== undefined) policy.required = entry.required;
    }
    return policy;
  }

  /** The policy objects from the built-in profile down to the entry, with how to name each one's rules. */
  #chain(
    top: Declared<SandboxPolicyEntry>,
    report: (path: string, message: string) => void,
  ): { profile: string; links: ChainLink[] } | undefined {
    const links: ChainLink[] = [];
    const seen: string[] = [];
    let current = top;
    for (;;) {
      const at = current;
      links.unshift({
        entry: at.value,
        origin: (key) => originOf(`${at.path}.${key}`, at.file),
        report: (key, message) => report(`${at.path}.${key}`, message),
      });
      const next = at.value.profile ?? 'read-only';
      // A profile name alone (`"sandbox": "npm"`) is reported at the field, an object's at its `profile` key.
      const where = at === top && Object.keys(at.value).length === 1 ? at.path : `${at.path}.profile`;
      const builtin = BUILTIN[next];
      if (builtin) {
        links.unshift({ entry: builtin, origin: () => `profile ${next}`, report: () => {} });
        return { profile: top.value.profile ?? next, links };
      }
      if (next === 'none') {
        report(where, 'a profile cannot start from "none": use false where no sandbox is meant');
        return undefined;
      }
      if (seen.includes(next)) {
        report(where, `profile "${next}" extends itself (${[...seen, next].join(' -> ')})`);
        return undefined;
      }
      seen.push(next);
      const profile = this.#profiles.get(next);
      if (!profile) {
        const known = [...BUILTIN_SANDBOX_PROFILES, ...this.#profiles.keys()].map((n) => `"${n}"`).join(', ');
        report(where, `unknown sandbox profile "${next}" (known: ${known})`);
        return undefined;
      }
      current = profile;
    }
  }

  /** `${workspace}`, then `${VAR}`, then `~`; relative to the project root. */
  #expandPath(written: string, report: (message: string) => void): string | undefined {
    const { workspace, env } = this.#context;
    const substituted = written.replaceAll('${workspace}', workspace);
    const { value, missing } = expandVars(substituted, env);
    for (const variable of missing) report(`uses \${${variable}}, which is not set`);
    if (missing.length > 0) return undefined;
    const home = env.HOME || homedir();
    const path = value === '~' || value.startsWith('~/') ? join(home, value.slice(1)) : value;
    return resolve(workspace, path);
  }
}

/** The problem with a custom profile's name, or undefined. */
export function profileNameProblem(name: string): string | undefined {
  return (BUILTIN_SANDBOX_PROFILES as readonly string[]).includes(name)
    ? `"${name}" is a built-in profile; give yours another name`
    : undefined;
}

/** Merges the `sandbox` sections of the files read, lowest precedence first. */
export function mergeSandboxSettings(sections: ReadonlyArray<{ settings: SandboxSettings; file: string }>): {
  profiles: Map<string, Declared<SandboxPolicyEntry>>;
  defaultForServers: Declared<SandboxField> | undefined;
  skillScripts: Declared<SandboxField> | undefined;
} {
  const profiles = new Map<string, Declared<SandboxPolicyEntry>>();
  let defaultForServers: Declared<SandboxField> | undefined;
  let skillScripts: Declared<SandboxField> | undefined;
  for (const { settings, file } of sections) {
    for (const [name, value] of Object.entries(settings.profiles ?? {}))
      profiles.set(name, { value, file, path: `sandbox.profiles.${name}` });
    if (settings.defaultForServers !== undefined)
      defaultForServers = { value: settings.defaultForServers, file, path: 'sandbox.defaultForServers' };
    if (settings.skillScripts !== undefined)
      skillScripts = { value: settings.skillScripts, file, path: 'sandbox.skillScripts' };
  }
  return { profiles, defaultForServers, skillScripts };
}

function networkRule(written: string, origin: string): SandboxNetworkRule {
  const match = NETWORK_RULE_PATTERN.exec(written)!;
  return {
    host: match[2]!.toLowerCase().replace(/\.$/, ''),
    port: Number(match[4]),
    subdomains: match[1] !== undefined,
    written,
    origin,
  };
}

function originOf(path: string, file: string): string {
  return `${path} (${basename(file)})`;
}

/** The policy's network in a few words: `no network`, `host network`, `2 hosts via proxy`. */
export function describeNetwork(network: SandboxPolicy['network']): string {
  if (network === false) return 'no network';
  if (network === true) return 'host network';
  return `${network.length} host${network.length === 1 ? '' : 's'} via proxy`;
}

/** The account's home folder as the password database has it; undefined where there is none (a uid without entry). */
function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined;
  }
}

/** A short, stable name for a project folder, for per-project state folders. */
function projectKey(workspace: string): string {
  return createHash('sha256').update(resolve(workspace)).digest('hex').slice(0, 12);
}
