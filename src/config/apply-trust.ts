import { join } from 'node:path';
import {
  type CheckTrustOptions,
  checkProjectTrust,
  type ProjectTrustScope,
  type ProjectTrustVerdict,
  TRUST_PROJECT_ENV,
} from '../security/project-trust.js';
import { type AgentConfig, formatIssue, invalidConfig, type TackConfig } from './load.js';
import { HOOK_EVENTS, type HookEntry, type HookEvent } from './schema.js';

/** What applyProjectTrust decided, kept on the configuration it returns. */
export interface ProjectTrustState {
  verdict: ProjectTrustVerdict;
  /** What the verdict held back; all empty when the project is trusted. */
  heldBack: HeldBack;
}

export interface HeldBack {
  /** Project servers switched off (they were enabled). */
  servers: string[];
  hooks: Array<{ event: HookEvent; command: string }>;
  allow: string[];
  skillFolders: string[];
  /** Project skill roots (relative to the project root) whose skills are not loaded. */
  skillRoots: string[];
  /** The project's `sandbox` section was set aside (it could loosen the sandbox of the user's servers and scripts). */
  sandbox: boolean;
}

/** The reason a held-back server shows (`tack servers`, the error a call to it gets). */
export function untrustedReason(verdict: ProjectTrustVerdict): string {
  if (verdict.problem) return `project not trusted (${verdict.problem})`;
  if (!verdict.neverTrusted && verdict.changed.length > 0)
    return `project changed since it was trusted (${listed(verdict.changed, 3)}): run \`tack trust\``;
  return 'project not trusted: run `tack trust`';
}

/** The files project trust covers for this configuration, seen from `cwd` (where skill discovery starts). */
export function projectTrustScope(config: TackConfig, cwd: string = process.cwd()): ProjectTrustScope {
  // The user named a --config file: it is trusted, and the project's own files are not read at all.
  const explicit = config.sources.some((source) => source.scope === 'explicit');
  return {
    root: config.projectRoot,
    cwd,
    configFiles: explicit
      ? []
      : [join(config.projectRoot, '.mcp.json'), join(config.projectRoot, 'tack.json')],
    skillFolders: config.fromProject?.skillFolders ?? [],
  };
}

/**
 * The configuration with what an untrusted project's files added held back: its servers switched off (with the
 * reason), its hooks dropped, its allow rules ignored (its deny and ask rules stay: they only make things stricter)
 * and its skill folders left out. Project skills (.agents/skills, .claude/skills) load only when
 * `projectTrust.verdict.trusted` (loadSkills reads it). Entries from the user's file or a --config file are
 * untouched. Pure: the configuration given is not changed.
 */
export function applyProjectTrust(config: TackConfig, verdict: ProjectTrustVerdict): TackConfig {
  const heldBack: HeldBack = {
    servers: [],
    hooks: [],
    allow: [],
    skillFolders: [],
    skillRoots: [],
    sandbox: false,
  };
  // A trusted project's files are used, so a broken one is the error it always was.
  const invalid = config.invalidProjectFiles ?? [];
  if (verdict.trusted && invalid.length > 0) throw invalidConfig(invalid.flatMap((file) => file.issues));
  if (verdict.trusted) return { ...config, projectTrust: { verdict, heldBack } };
  const reason = untrustedReason(verdict);
  const from = config.fromProject ?? { hooks: [], allow: [], skillFolders: [] };
  const sandbox = from.sandbox;
  heldBack.sandbox = sandbox !== undefined;
  const servers = config.servers.map((server) => {
    if (server.source.scope !== 'project') {
      return sandbox && server.transport === 'stdio' && server.enabled
        ? { ...server, sandbox: sandbox.servers[server.name] }
        : server;
    }
    if (!server.enabled) return server;
    heldBack.servers.push(server.name);
    return { ...server, enabled: false, disabledReason: reason };
  });

  // By value rather than identity, so a copied configuration works too; project entries were merged after the
  // user's, so they are taken from the end, and a user entry that happens to equal one stays.
  const hooks = dropHooks(config.agent.hooks, from.hooks);
  heldBack.hooks = from.hooks
    .filter(({ event, hook }) => config.agent.hooks?.[event]?.some((h) => sameHook(h, hook)))
    .map(({ event, hook }) => ({ event, command: hook.command }));
  const allow = removeFromEnd(config.permissions.allow, from.allow, (a, b) => a === b);
  heldBack.allow = from.allow.filter((rule) => config.permissions.allow.includes(rule));
  // Project skill folders come first in the list (more local first).
  const skillFolders = removeFromEnd(
    [...config.skillFolders].reverse(),
    from.skillFolders,
    (a, b) => a === b,
  ).reverse();
  heldBack.skillFolders = from.skillFolders.filter((folder) => config.skillFolders.includes(folder));
  heldBack.skillRoots = verdict.skillRoots.filter((root) => !heldBackFolder(root, from.skillFolders, config));

  const agent: AgentConfig = { ...config.agent };
  if (hooks) agent.hooks = hooks;
  else delete agent.hooks;
  return {
    ...config,
    servers,
    agent,
    permissions: { ...config.permissions, allow },
    ...(sandbox ? { sandbox: { skillScripts: sandbox.skillScripts } } : {}),
    skillFolders,
    projectTrust: { verdict, heldBack },
  };
}

/**
 * Checks the project's trust and applies it: the one call the CLI and `startAgent` make. A configuration that
 * already went through applyProjectTrust is returned as it is.
 */
export async function resolveProjectTrust(
  config: TackConfig,
  options: CheckTrustOptions & { cwd?: string } = {},
): Promise<TackConfig> {
  if (config.projectTrust) return config;
  const { cwd, ...check } = options;
  return applyProjectTrust(config, await checkProjectTrust(projectTrustScope(config, cwd), check));
}

/** Whether the project's skills (.agents/skills, .claude/skills) may load under this configuration. */
export function projectSkillsTrusted(config: Pick<TackConfig, 'projectTrust'>): boolean {
  return config.projectTrust?.verdict.trusted === true;
}

/**
 * One warning for the user when something was held back: what, which files, what to run. Undefined when nothing
 * was (a trusted project, or one with nothing to trust).
 */
export function projectTrustWarning(config: Pick<TackConfig, 'projectTrust'>): string | undefined {
  const state = config.projectTrust;
  if (!state || state.verdict.trusted) return undefined;
  const { verdict, heldBack } = state;
  const items = [
    heldBack.servers.length > 0 &&
      `server${heldBack.servers.length === 1 ? '' : 's'} ${heldBack.servers.map((s) => `"${s}"`).join(', ')}`,
    heldBack.hooks.length > 0 && `${heldBack.hooks.length} hook${heldBack.hooks.length === 1 ? '' : 's'}`,
    heldBack.allow.length > 0 &&
      `${heldBack.allow.length} allow rule${heldBack.allow.length === 1 ? '' : 's'}`,
    (heldBack.skillRoots.length > 0 || heldBack.skillFolders.length > 0) && 'project skills',
    heldBack.sandbox && 'its sandbox settings',
  ].filter((item): item is string => typeof item === 'string');
  if (items.length === 0) return undefined;
  const what = `held back ${items.join(', ')}`;
  const run = `review them and run \`tack trust\` (or --trust-project / ${TRUST_PROJECT_ENV}=1 for one run)`;
  if (!verdict.neverTrusted && verdict.changes.length > 0) {
    const changes = verdict.changes.map((c) => `${c.path} (${c.kind})`);
    return `project ${verdict.root} changed since you trusted it: ${listed(changes, 5)}; ${what}; ${run}`;
  }
  const why = verdict.problem ? ` (${verdict.problem})` : '';
  return `project ${verdict.root} is not trusted${why}: ${what} from ${listed(verdict.files, 5)}; ${run}`;
}

/**
 * One warning per project file left out because it does not validate, when the project is not trusted (when it
 * is, applyProjectTrust throws instead).
 */
export function invalidProjectFilesWarnings(config: Pick<TackConfig, 'invalidProjectFiles'>): string[] {
  return (config.invalidProjectFiles ?? []).map(({ file, issues }) => {
    const more =
      issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
    return `${formatIssue(issues[0]!)}${more}; ignored ${file} whole: the project is not trusted, so nothing of it is used (fix it before \`tack trust\`)`;
  });
}

function listed(items: readonly string[], max: number): string {
  return items.length > max
    ? `${items.slice(0, max).join(', ')} and ${items.length - max} more`
    : items.join(', ');
}

/** Whether a verdict's skill root is one of the project's declared folders (counted there already). */
function heldBackFolder(root: string, folders: readonly string[], config: TackConfig): boolean {
  return folders.some((folder) => join(config.projectRoot, root) === folder);
}

function sameHook(a: HookEntry, b: HookEntry): boolean {
  return a.command === b.command && a.matcher === b.matcher && a.timeoutMs === b.timeoutMs;
}

function dropHooks(
  hooks: AgentConfig['hooks'],
  drop: ReadonlyArray<{ event: HookEvent; hook: HookEntry }>,
): AgentConfig['hooks'] {
  if (!hooks) return undefined;
  const out: NonNullable<AgentConfig['hooks']> = {};
  for (const event of HOOK_EVENTS) {
    const list = removeFromEnd(
      hooks[event] ?? [],
      drop.filter((d) => d.event === event).map((d) => d.hook),
      sameHook,
    );
    if (list.length > 0) out[event] = list;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `list` without one occurrence of each of `drop`, taken from the end. */
function removeFromEnd<T>(list: readonly T[], drop: readonly T[], same: (a: T, b: T) => boolean): T[] {
  const out = [...list];
  for (const item of [...drop].reverse()) {
    for (let i = out.length - 1; i >= 0; i--) {
      if (same(out[i]!, item)) {
        out.splice(i, 1);
        break;
      }
    }
  }
  return out;
}
