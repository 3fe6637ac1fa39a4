import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type * as z from 'zod';
import { TackError } from '../errors.js';
import type { Capability } from '../security/capabilities.js';
import { ruleProblem } from '../security/rules.js';
import { pushAll } from '../util/arrays.js';
import { isRecord } from '../util/is-record.js';
import { readRegularFile } from '../util/read-regular.js';
import type { ProjectTrustState } from './apply-trust.js';
import { type ExpandResult, expandVars } from './expand.js';
import { type Limits, type LimitsConfig, LimitsSchema, resolveLimits } from './limits.js';
import { findProjectRoot, projectLogDir, resolvePaths, type TackPaths } from './paths.js';
import {
  DEFAULT_SKILL_SCRIPT_SANDBOX,
  type Declared,
  mergeSandboxSettings,
  profileNameProblem,
  type SandboxPolicy,
  SandboxResolver,
} from './sandbox.js';
import { type ScanConfig, ScanSchema } from './scan.js';
import {
  AgentSchema,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_STARTUP_TIMEOUT_MS,
  entrySchemaFor,
  HOOK_EVENTS,
  type HookEntry,
  type HookEvent,
  type HttpServerEntry,
  KnowledgeSchema,
  knownKeys,
  type OAuthSettings,
  PermissionsSchema,
  type SandboxField,
  type SandboxSettings,
  SandboxSettingsSchema,
  ServeSchema,
  type SseServerEntry,
  type StdioServerEntry,
  StoreSchema,
  TackConfigFileSchema,
} from './schema.js';
import { type ToolSearchConfig, ToolSearchSchema } from './tool-search.js';

/** Where a server entry came from; `project` entries wait for project trust (config/apply-trust.ts). */
export interface ConfigSource {
  file: string;
  scope: 'user' | 'project' | 'explicit';
  format: 'tack' | 'mcp.json';
}

interface ServerConfigBase {
  name: string;
  enabled: boolean;
  startupTimeoutMs: number;
  callTimeoutMs: number;
  enabledTools: string[] | undefined;
  /** Its annotations are believed: a tool hinted read-only runs without approval. */
  trusted: boolean;
  /** Tools sent every step even when the agent defers definitions: all (true) or these names. */
  alwaysLoad: boolean | string[];
  /** Capability labels per server tool name (`*`: every tool), replacing tack's guesses (security/capabilities.ts). */
  capabilities?: Record<string, Capability[]>;
  disabledTools: string[] | undefined;
  source: ConfigSource;
  /** Why tack switched the entry off (`enabled: false`) rather than its file, e.g. the project is not trusted. */
  disabledReason?: string;
}

/** A server tack starts as a process and talks to over stdio, as configured. */
export interface StdioServerConfig extends ServerConfigBase {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Only what the entry sets; the safe default environment is added at spawn time. */
  env: Record<string, string>;
  /** Absolute. */
  cwd: string;
  /** The sandbox it runs in (its own `sandbox`, else `sandbox.defaultForServers`); absent: none. */
  sandbox?: SandboxPolicy | undefined;
}

/** A server reached over Streamable HTTP or legacy SSE, as configured. */
export interface HttpServerConfig extends ServerConfigBase {
  /** `http` tries Streamable HTTP, then legacy SSE; `sse` goes straight to legacy SSE. */
  transport: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
  /**
   * OAuth when the server asks for it (401 with OAuth metadata); `false` when the entry says so or sends its own
   * Authorization header (a token someone else manages must not be replaced by a login). Absent: on.
   */
  oauth?: OAuthSettings | false | undefined;
}

/** One configured MCP server: over stdio or over HTTP. */
export type ServerConfig = StdioServerConfig | HttpServerConfig;

/** A problem in a configuration file that did not stop loading, at its file and JSON path. */
export interface ConfigWarning {
  file: string;
  path: string;
  message: string;
}

/** `serve` in tack.json: how `tack serve` and the other tack servers accept HTTP clients. */
export type ServeConfig = z.infer<typeof ServeSchema>;

/** `store` in tack.json, TACK_STORE_URL applied: a PostgreSQL URL, or nothing for SQLite in the state directory. */
export type StoreConfig = z.infer<typeof StoreSchema>;

/** The variable that names the store's PostgreSQL server, over any configuration file. */
export const STORE_URL_ENV = 'TACK_STORE_URL';

/**
 * The merged configuration: servers, permissions, agent, skills, knowledge, limits, paths and where each came
 * from.
 */
export interface TackConfig {
  /** In the order they were declared, user file first; a later file's entry replaces an earlier one of the same name. */
  servers: ServerConfig[];
  /** Merged field by field, the more local file winning. */
  serve: ServeConfig;
  /** Where the store lives: TACK_STORE_URL, else the user file's or --config file's `store` (never a project's). */
  store: StoreConfig;
  /** `skills` folders (absolute), the more local file's first, each file's in the order given. */
  skillFolders: string[];
  /** Knowledge bundles (more local file's first) and computation runtimes (merged per runtime, more local wins). */
  knowledge: KnowledgeConfig;
  /** The harness settings, merged key by key (the more local file winning); hooks and prices are combined. */
  agent: AgentConfig;
  /** Approval rules from every file, combined (the user's and the project's all apply). */
  permissions: { allow: string[]; ask: string[]; deny: string[] };
  /** `limits`, merged key by key (the more local file winning) over the defaults. */
  limits: Limits;
  /** `toolSearch`, merged key by key (the more local file winning); `${VAR}` expanded. */
  toolSearch: ToolSearchConfig;
  /** `scan`, merged key by key (the more local file winning). */
  scan: ScanConfig;
  /** The sandbox skill scripts run in (absent: none); servers carry their own (`StdioServerConfig.sandbox`). */
  sandbox: { skillScripts: SandboxPolicy | undefined };
  /** Files that were read, lowest precedence first. */
  sources: ConfigSource[];
  warnings: ConfigWarning[];
  projectRoot: string;
  paths: TackPaths;
  /** What the project's own files (its .mcp.json and tack.json) added: what project trust holds back. */
  fromProject?: ProjectContributions;
  /**
   * Project files that did not validate, left out whole (only with `deferProjectIssues`): resolveProjectTrust
   * throws them as CONFIG_INVALID when the project is trusted, and only warns when it is not (nothing of an
   * untrusted project's servers would run anyway).
   */
  invalidProjectFiles?: InvalidConfigFile[];
  /** Set by applyProjectTrust: the verdict and what it held back. */
  projectTrust?: ProjectTrustState;
}

/** The hooks, allow rules and skill folders that came from the project's files, as they were declared. */
export interface ProjectContributions {
  hooks: Array<{ event: HookEvent; hook: HookEntry }>;
  allow: string[];
  skillFolders: string[];
  /**
   * Set when the project's files have a `sandbox` section: the policies skill scripts and the other files'
   * servers get without it, which apply while the project is not trusted (it could loosen them).
   */
  sandbox?: { skillScripts: SandboxPolicy | undefined; servers: Record<string, SandboxPolicy | undefined> };
}

export type AgentConfig = z.infer<typeof AgentSchema>;

export interface KnowledgeConfig {
  bundles: Array<{ path: string; name?: string }>;
  runtimes: { sqlite?: { database: string }; postgres?: { url: string } };
}

/** A configuration file that did not validate, with every problem found in it. */
export interface InvalidConfigFile {
  file: string;
  issues: ConfigWarning[];
}

/** Which file to load (else every file that applies), the working folder and the environment. */
export interface LoadConfigOptions {
  /** Directory the project is looked up from (default `process.cwd()`). */
  cwd?: string;
  /** Use exactly this file (tack.json or .mcp.json format) and no other. */
  configFile?: string;
  /** Variables for `${VAR}` expansion and for locating XDG directories (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Do not throw for a project file (.mcp.json, tack.json) that does not validate: leave the file out and list
   * it in `invalidProjectFiles`, for resolveProjectTrust to judge. What the CLI does: a broken .mcp.json in a
   * project the user never trusted must not stop every command there.
   */
  deferProjectIssues?: boolean;
}

/**
 * Reads the configuration the way a user expects from Claude Code: the user file, then the project's
 * `.mcp.json`, then the project's `tack.json`, the more local file winning per server name. Every problem in
 * every file is collected and thrown together as one CONFIG_INVALID error, before anything starts.
 */
export function loadConfig(options: LoadConfigOptions = {}): TackConfig {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const paths = resolvePaths(env);
  const projectRoot = options.configFile ? dirname(resolve(cwd, options.configFile)) : findProjectRoot(cwd);

  const candidates: Array<ConfigSource & { required: boolean }> = options.configFile
    ? [{ file: resolve(cwd, options.configFile), scope: 'explicit', format: 'tack', required: true }]
    : [
        { file: paths.userConfigFile, scope: 'user', format: 'tack', required: false },
        { file: join(projectRoot, '.mcp.json'), scope: 'project', format: 'mcp.json', required: false },
        { file: join(projectRoot, 'tack.json'), scope: 'project', format: 'tack', required: false },
      ];

  const issues: ConfigWarning[] = [];
  const warnings: ConfigWarning[] = [];
  const byName = new Map<string, ServerConfig>();
  const sources: ConfigSource[] = [];
  let serve: ServeConfig = {};
  let store: StoreConfig = {};
  let storeFile: string | undefined;
  let skillFolders: string[] = [];
  const knowledge: KnowledgeConfig = { bundles: [], runtimes: {} };
  let agent: AgentConfig = {};
  let limits: LimitsConfig = {};
  let toolSearch: ToolSearchConfig = {};
  let scan: ScanConfig = {};
  const permissions: TackConfig['permissions'] = { allow: [], ask: [], deny: [] };
  const fromProject: ProjectContributions = { hooks: [], allow: [], skillFolders: [] };
  const sandboxSections: Array<{ settings: SandboxSettings; file: string; project: boolean }> = [];
  const sandboxFields = new Map<string, Declared<SandboxField>>();

  const invalidProjectFiles: InvalidConfigFile[] = [];

  for (const { required, ...source } of candidates) {
    const text = readConfigText(source.file, required);
    if (text === undefined) continue;
    const parsed = parseConfigText(text, source, env);
    if (options.deferProjectIssues && source.scope === 'project' && parsed.issues.length > 0) {
      invalidProjectFiles.push({ file: source.file, issues: parsed.issues });
      continue;
    }
    sources.push(source);
    pushAll(issues, parsed.issues);
    pushAll(warnings, parsed.warnings);
    if (parsed.serve) serve = { ...serve, ...parsed.serve };
    if (parsed.store && source.scope === 'project')
      // A repository must not choose where tack writes its tokens and audit log, nor read them from a server of its own.
      warnings.push({
        file: source.file,
        path: 'store',
        message: `ignored in a project file: set it in ${paths.userConfigFile}, a --config file or ${STORE_URL_ENV}`,
      });
    else if (parsed.store) {
      store = { ...store, ...parsed.store };
      if (parsed.store.url !== undefined) storeFile = source.file;
    }
    skillFolders = [...parsed.skillFolders, ...skillFolders];
    if (parsed.agent) agent = mergeAgent(agent, parsed.agent);
    if (parsed.limits) limits = { ...limits, ...parsed.limits };
    if (parsed.toolSearch) toolSearch = { ...toolSearch, ...parsed.toolSearch };
    if (parsed.scan) scan = { ...scan, ...parsed.scan };
    for (const action of ['allow', 'ask', 'deny'] as const)
      pushAll(permissions[action], parsed.permissions?.[action] ?? []);
    if (source.scope === 'project') {
      for (const event of HOOK_EVENTS)
        for (const hook of parsed.agent?.hooks?.[event] ?? []) fromProject.hooks.push({ event, hook });
      pushAll(fromProject.allow, parsed.permissions?.allow ?? []);
      pushAll(fromProject.skillFolders, parsed.skillFolders);
    }
    if (parsed.sandbox)
      sandboxSections.push({
        settings: parsed.sandbox,
        file: source.file,
        project: source.scope === 'project',
      });
    if (parsed.knowledge) {
      knowledge.bundles = [...parsed.knowledge.bundles, ...knowledge.bundles];
      knowledge.runtimes = { ...knowledge.runtimes, ...parsed.knowledge.runtimes };
    }
    for (const server of parsed.servers) {
      byName.delete(server.name); // re-insert so declaration order follows precedence
      byName.set(server.name, server);
      const declared = parsed.sandboxFields.get(server.name);
      if (declared) sandboxFields.set(server.name, declared);
      else sandboxFields.delete(server.name);
    }
  }

  const servers = [...byName.values()];
  const context = { workspace: projectRoot, env, paths };
  // A broken sandbox section would make every reference to its profiles an error too: report it alone.
  const sandboxBroken = issues.some((i) => i.path === 'sandbox' || i.path.startsWith('sandbox.'));
  const sandbox = sandboxBroken
    ? { skillScripts: undefined, servers: {} }
    : resolveSandboxes(servers, sandboxFields, sandboxSections, context, issues);
  if (sandboxSections.some((section) => section.project)) {
    // What applies while the project is untrusted: the same, resolved without the project's sandbox section.
    const without = resolveSandboxes(
      servers.filter((server) => server.source.scope !== 'project'),
      sandboxFields,
      sandboxSections.filter((section) => !section.project),
      context,
      [],
    );
    fromProject.sandbox = { skillScripts: without.skillScripts, servers: without.servers };
  }
  for (const server of servers)
    if (server.transport === 'stdio') server.sandbox = sandbox.servers[server.name];

  const storeUrl = env[STORE_URL_ENV];
  if (storeUrl) store = { ...store, url: storeUrl };
  if (store.url !== undefined && !/^postgres(ql)?:\/\//i.test(store.url))
    issues.push({
      file: storeUrl ? STORE_URL_ENV : (storeFile ?? paths.userConfigFile),
      path: storeUrl ? '' : 'store.url',
      message: `expected a postgres:// or postgresql:// URL, got ${JSON.stringify(store.url.replace(/\/\/[^@/]*@/, '//***@'))}`,
    });

  if (issues.length > 0) throw invalidConfig(issues, cwd);
  return {
    servers,
    serve,
    store,
    skillFolders,
    knowledge,
    agent,
    permissions,
    limits: resolveLimits(limits),
    toolSearch,
    scan,
    sandbox: { skillScripts: sandbox.skillScripts },
    sources,
    warnings,
    projectRoot,
    paths: { ...paths, logDir: projectLogDir(paths.logDir, projectRoot) },
    fromProject,
    ...(invalidProjectFiles.length > 0 ? { invalidProjectFiles } : {}),
  };
}

/** The one CONFIG_INVALID error for a set of problems: the first as the message, the rest as details. */
export function invalidConfig(issues: readonly ConfigWarning[], cwd: string = process.cwd()): TackError {
  const lines = issues.map((issue) => formatIssue(issue, cwd));
  const first = issues[0]!;
  return new TackError('CONFIG_INVALID', lines[0]!, {
    subject: { file: first.file, path: first.path },
    details: lines.slice(1),
    hint: 'Fix the configuration and run again; no server was started.',
  });
}

/**
 * Every stdio server's sandbox (its own field, else `sandbox.defaultForServers`) and the skill scripts' (else
 * tack's default: workspace-write, preferred), against the profiles of `sections`. A policy that cannot be resolved
 * is an issue; in the untrusted-project pass (no `issues` reported) it falls back to read-only, required.
 */
function resolveSandboxes(
  servers: readonly ServerConfig[],
  fields: ReadonlyMap<string, Declared<SandboxField>>,
  sections: ReadonlyArray<{ settings: SandboxSettings; file: string }>,
  context: ConstructorParameters<typeof SandboxResolver>[1],
  issues: ConfigWarning[],
): { skillScripts: SandboxPolicy | undefined; servers: Record<string, SandboxPolicy | undefined> } {
  const merged = mergeSandboxSettings(sections);
  const resolver = new SandboxResolver(merged.profiles, context);
  const resolve = (field: Declared<SandboxField>, name: string, required = true) => {
    const problems: ConfigWarning[] = [];
    const policy = resolver.resolve(field, name, problems, required);
    pushAll(issues, problems);
    if (problems.length === 0) return policy;
    return resolver.resolve({ value: 'read-only', file: field.file, path: field.path }, name, [], true);
  };
  const out: Record<string, SandboxPolicy | undefined> = {};
  for (const server of servers) {
    if (server.transport !== 'stdio' || !server.enabled) continue;
    const field = fields.get(server.name) ?? merged.defaultForServers;
    if (field) out[server.name] = resolve(field, server.name);
  }
  let skillScripts: SandboxPolicy | undefined;
  // `.skill-scripts`: a server name cannot hold a dot, so no server's state folder is the one holding every skill's.
  if (merged.skillScripts) skillScripts = resolve(merged.skillScripts, SKILL_SCRIPTS_STATE);
  else {
    const field = { value: DEFAULT_SKILL_SCRIPT_SANDBOX, file: '', path: '' };
    skillScripts = resolve(field, SKILL_SCRIPTS_STATE, false);
    if (skillScripts) skillScripts.origin = "tack's default for skill scripts";
  }
  // What one sandboxed process may write, another's rule must not be resolved through (a planted link).
  const policies = [skillScripts, ...Object.values(out)].filter((p): p is SandboxPolicy => p !== undefined);
  const writable = [...new Set(policies.flatMap((p) => [...p.write.map((rule) => rule.path), p.stateDir]))];
  for (const policy of policies) policy.writableBySandboxes = writable;
  return { skillScripts, servers: out };
}

const SKILL_SCRIPTS_STATE = '.skill-scripts';

/** No configuration file is this large; past it the file is not read (nor a device or FIFO read at all). */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

function readConfigText(file: string, required: boolean): string | undefined {
  try {
    // A file named with --config is the user's choice (`--config <(...)` is a FIFO); a discovered one may be planted.
    return required ? readFileSync(file, 'utf8') : readRegularFile(file, MAX_CONFIG_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!required && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    throw new TackError(
      'CONFIG_UNREADABLE',
      `${file}: cannot read the configuration file (${code ?? 'error'})`,
      {
        subject: { file },
        hint:
          code === 'ENOENT'
            ? 'Check the path given to --config.'
            : code === 'ENOTREG' || code === 'EFBIG'
              ? 'A configuration file is a regular JSON file of a sensible size: replace it with one.'
              : 'Check the file permissions.',
        cause: error,
      },
    );
  }
}

export function formatIssue(issue: ConfigWarning, cwd: string = process.cwd()): string {
  const rel = relative(cwd, issue.file);
  const shown = rel && !rel.startsWith('..') ? rel : issue.file;
  return issue.path ? `${shown}: ${issue.path}: ${issue.message}` : `${shown}: ${issue.message}`;
}

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
const TOP_LEVEL_KEYS = knownKeys(TackConfigFileSchema);

interface ParsedFile {
  servers: ServerConfig[];
  /** The `sandbox` section, checked; resolved once every file is read (a profile may live in another file). */
  sandbox?: SandboxSettings;
  /** Each stdio server's own `sandbox` field, where it was written. */
  sandboxFields: Map<string, Declared<SandboxField>>;
  serve: ServeConfig | undefined;
  store?: StoreConfig;
  skillFolders: string[];
  knowledge?: KnowledgeConfig;
  agent?: AgentConfig;
  permissions?: { allow?: string[]; ask?: string[]; deny?: string[] };
  limits?: LimitsConfig;
  toolSearch?: ToolSearchConfig;
  scan?: ScanConfig;
  issues: ConfigWarning[];
  warnings: ConfigWarning[];
}

/** Parses and validates one file's text. Exported so a library caller can validate a config it holds in memory. */
export function parseConfigText(
  text: string,
  source: ConfigSource,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ParsedFile {
  const issues: ConfigWarning[] = [];
  const warnings: ConfigWarning[] = [];
  const servers: ServerConfig[] = [];
  const result: ParsedFile = {
    servers,
    serve: undefined,
    skillFolders: [],
    sandboxFields: new Map(),
    issues,
    warnings,
  };
  const issue = (path: string, message: string) => issues.push({ file: source.file, path, message });

  let root: unknown;
  try {
    root = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    issue('', `invalid JSON: ${jsonErrorWithPosition(text, error)}`);
    return result;
  }
  if (!isRecord(root)) {
    issue('', `expected a JSON object at the top level, got ${describe(root)}`);
    return result;
  }
  if (source.format === 'tack') {
    for (const key of Object.keys(root)) {
      if (!TOP_LEVEL_KEYS.has(key)) {
        warnings.push({ file: source.file, path: jsonPath([key]), message: 'unknown key, ignored' });
      }
    }
  }
  if (source.format === 'tack' && root.serve !== undefined) result.serve = parseServe(root.serve, env, issue);
  if (source.format === 'tack' && root.store !== undefined) result.store = parseStore(root.store, env, issue);
  if (source.format === 'tack' && root.skills !== undefined) {
    result.skillFolders = parseFolders('skills', root.skills, source.file, env, issue);
  }
  if (source.format === 'tack') {
    result.agent = section(root, 'agent', AgentSchema, issue);
    const permissions = section(root, 'permissions', PermissionsSchema, issue);
    if (permissions) {
      for (const action of ['allow', 'ask', 'deny'] as const)
        (permissions[action] ?? []).forEach((pattern, i) => {
          const problem = ruleProblem(pattern, action);
          if (problem) issue(`permissions.${action}[${i}]`, `"${pattern}": ${problem}`);
        });
      result.permissions = permissions;
    }
    result.limits = section(root, 'limits', LimitsSchema, issue);
    result.scan = section(root, 'scan', ScanSchema, issue);
  }
  if (source.format === 'tack' && root.toolSearch !== undefined) {
    const parsed = ToolSearchSchema.safeParse(root.toolSearch);
    if (parsed.success) {
      const embeddings = parsed.data.embeddings;
      for (const key of ['baseURL', 'apiKey'] as const) {
        const raw = embeddings?.[key];
        if (embeddings && raw !== undefined)
          embeddings[key] = expandReporting(
            raw,
            env,
            (message) => issue(`toolSearch.embeddings.${key}`, message),
            (variable) => `set ${variable} or remove toolSearch.embeddings.${key}`,
          ).value;
      }
      result.toolSearch = parsed.data;
    } else
      for (const zi of parsed.error.issues)
        issue(
          jsonPath(['toolSearch', ...zi.path.map(pathKey)]),
          zodMessage(zi, isRecord(root.toolSearch) ? root.toolSearch : {}),
        );
  }
  if (source.format === 'tack' && root.sandbox !== undefined) {
    const section = root.sandbox;
    const profiles = isRecord(section) && isRecord(section.profiles) ? Object.keys(section.profiles) : [];
    for (const name of profiles) {
      const problem = profileNameProblem(name);
      if (problem) issue(jsonPath(['sandbox', 'profiles', name]), problem);
    }
    const parsed = SandboxSettingsSchema.safeParse(section);
    if (parsed.success) result.sandbox = parsed.data;
    else
      for (const zi of parsed.error.issues)
        issue(
          jsonPath(['sandbox', ...zi.path.map(pathKey)]),
          zodMessage(zi, isRecord(section) ? section : {}),
        );
  }
  if (source.format === 'tack' && root.knowledge !== undefined) {
    result.knowledge = parseKnowledge(root.knowledge, source.file, env, issue);
  }
  const block = root.mcpServers;
  if (block === undefined) return result;
  const resultSandbox = result.sandboxFields;
  if (!isRecord(block)) {
    issue('mcpServers', `expected an object of servers by name, got ${describe(block)}`);
    return result;
  }

  for (const [name, entry] of Object.entries(block)) {
    const at = (...rest: Array<string | number>) => jsonPath(['mcpServers', name, ...rest]);
    const nameProblem = checkServerName(name);
    if (nameProblem) {
      issue(at(), nameProblem);
      continue;
    }
    if (!isRecord(entry)) {
      issue(at(), `expected a server entry object, got ${describe(entry)}`);
      continue;
    }
    const pick = entrySchemaFor(entry);
    if (!pick) {
      issue(
        entry.type === undefined ? at() : at('type'),
        entry.type === undefined
          ? 'expected "command" (a stdio server) or "url" (an HTTP server)'
          : `expected "stdio", "http" or "sse", got ${describe(entry.type)}`,
      );
      continue;
    }
    const result = pick.schema.safeParse(entry);
    if (!result.success) {
      for (const zi of result.error.issues) issue(at(...zi.path.map(pathKey)), zodMessage(zi, entry));
      continue;
    }
    for (const key of Object.keys(entry)) {
      if (!knownKeys(pick.schema).has(key)) {
        warnings.push({ file: source.file, path: at(key), message: 'unknown key, ignored' });
      }
    }
    const warn = (path: string, message: string) => warnings.push({ file: source.file, path, message });
    const server = resolveEntry(name, pick.transport, result.data, source, env, { issue, warn }, at);
    if (server) servers.push(server);
    const sandbox = (result.data as StdioServerEntry).sandbox;
    if (server?.transport === 'stdio' && sandbox !== undefined)
      resultSandbox.set(name, { value: sandbox, file: source.file, path: at('sandbox') });
  }
  return result;
}

function resolveEntry(
  name: string,
  transport: 'stdio' | 'http' | 'sse',
  data: StdioServerEntry | HttpServerEntry | SseServerEntry,
  source: ConfigSource,
  env: Readonly<Record<string, string | undefined>>,
  sink: { issue: (path: string, message: string) => void; warn: (path: string, message: string) => void },
  at: (...rest: Array<string | number>) => string,
): ServerConfig | undefined {
  const enabled = data.enabled !== false;
  let failed = false;
  const report = (path: string, message: string) => {
    failed = true;
    sink.issue(path, message);
  };
  // A disabled entry may name variables that are not set on this machine: expand only what will start.
  const expand = (value: string, path: string): string => {
    if (!enabled) return value;
    const { value: out, malformed } = expandReporting(
      value,
      env,
      (message) => report(path, message),
      (variable) => `set ${variable} or write \${${variable}:-default}`,
    );
    for (const reference of malformed) {
      sink.warn(path, `${reference} is not \${VAR} or \${VAR:-default}; it is passed on as written`);
    }
    return out;
  };
  const expandMap = (map: Record<string, string> | undefined, key: string) =>
    Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, expand(v, at(key, k))]));

  const base: ServerConfigBase = {
    name,
    enabled,
    startupTimeoutMs: data.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS,
    callTimeoutMs: data.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    enabledTools: data.enabledTools,
    disabledTools: data.disabledTools,
    trusted: data.trusted === true,
    alwaysLoad: data.alwaysLoad ?? false,
    capabilities: data.capabilities ?? {},
    source,
  };
  if (transport === 'stdio') {
    const entry = data as StdioServerEntry;
    const configured: StdioServerConfig = {
      ...base,
      transport,
      command: expand(entry.command, at('command')),
      args: (entry.args ?? []).map((arg, i) => expand(arg, at('args', i))),
      env: expandMap(entry.env, 'env'),
      cwd: resolve(dirname(source.file), entry.cwd ?? '.'),
    };
    return failed ? undefined : configured;
  }
  const entry = data as HttpServerEntry;
  const url = expand(entry.url, at('url'));
  if (enabled && !failed && !isHttpUrl(url)) report(at('url'), `expected a URL, got ${JSON.stringify(url)}`);
  const headers = expandMap(entry.headers, 'headers');
  const configured: HttpServerConfig = {
    ...base,
    transport: transport === 'sse' ? 'sse' : 'http',
    url,
    headers,
    oauth: resolveOAuth(entry.oauth, headers, expand, at),
  };
  return failed ? undefined : configured;
}

function resolveOAuth(
  oauth: HttpServerEntry['oauth'],
  headers: Record<string, string>,
  expand: (value: string, path: string) => string,
  at: (...rest: Array<string | number>) => string,
): OAuthSettings | false {
  if (oauth === false) return false;
  if (oauth === undefined) {
    const ownAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
    return ownAuthorization ? false : {};
  }
  return {
    ...oauth,
    ...(oauth.clientId !== undefined ? { clientId: expand(oauth.clientId, at('oauth', 'clientId')) } : {}),
    ...(oauth.clientSecret !== undefined
      ? { clientSecret: expand(oauth.clientSecret, at('oauth', 'clientSecret')) }
      : {}),
  };
}

function parseFolders(
  key: string,
  value: unknown,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  issue: (path: string, message: string) => void,
): string[] {
  if (!Array.isArray(value)) {
    issue(key, `expected an array of folder paths, got ${describe(value)}`);
    return [];
  }
  const folders: string[] = [];
  value.forEach((entry, i) => {
    if (typeof entry !== 'string' || entry === '') {
      issue(`${key}[${i}]`, `expected a folder path, got ${describe(entry)}`);
      return;
    }
    folders.push(filePath(entry, `${key}[${i}]`, file, env, issue));
  });
  return folders;
}

/** A path written in a config file: `${VAR}` and `~` expand, relative to the file. */
function filePath(
  value: string,
  at: string,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  issue: (path: string, message: string) => void,
): string {
  const { value: expanded } = expandReporting(value, env, (message) => issue(at, message));
  const home = env.HOME ?? '';
  const path = expanded === '~' || expanded.startsWith('~/') ? join(home, expanded.slice(1)) : expanded;
  return resolve(dirname(file), path);
}

/** `later` wins key by key; hook lists and price tables are combined (user hooks run, and so do the project's). */
function mergeAgent(earlier: AgentConfig, later: AgentConfig): AgentConfig {
  const merged: AgentConfig = { ...earlier, ...later };
  if (earlier.prices || later.prices) merged.prices = { ...earlier.prices, ...later.prices };
  if (earlier.hooks || later.hooks) {
    const hooks: NonNullable<AgentConfig['hooks']> = {};
    for (const event of HOOK_EVENTS) {
      const list = [...(earlier.hooks?.[event] ?? []), ...(later.hooks?.[event] ?? [])];
      if (list.length > 0) hooks[event] = list;
    }
    merged.hooks = hooks;
  }
  return merged;
}

function parseKnowledge(
  value: unknown,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  issue: (path: string, message: string) => void,
): KnowledgeConfig | undefined {
  const parsed = KnowledgeSchema.safeParse(value);
  if (!parsed.success) {
    for (const zi of parsed.error.issues) {
      issue(jsonPath(['knowledge', ...zi.path.map(pathKey)]), zodMessage(zi, isRecord(value) ? value : {}));
    }
    return undefined;
  }
  const { bundles = [], runtimes = {} } = parsed.data;
  const out: KnowledgeConfig = {
    bundles: bundles.map((entry, i) => {
      const at = `knowledge.bundles[${i}]`;
      return typeof entry === 'string'
        ? { path: filePath(entry, at, file, env, issue) }
        : {
            path: filePath(entry.path, `${at}.path`, file, env, issue),
            ...(entry.name ? { name: entry.name } : {}),
          };
    }),
    runtimes: {},
  };
  if (runtimes.sqlite)
    out.runtimes.sqlite = {
      database: filePath(runtimes.sqlite.database, 'knowledge.runtimes.sqlite.database', file, env, issue),
    };
  if (runtimes.postgres) {
    const { value: url } = expandReporting(
      runtimes.postgres.url,
      env,
      (message) => issue('knowledge.runtimes.postgres.url', message),
      (variable) => `set ${variable} or remove knowledge.runtimes.postgres`,
    );
    out.runtimes.postgres = { url };
  }
  return out;
}

function parseServe(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  issue: (path: string, message: string) => void,
): ServeConfig | undefined {
  const parsed = ServeSchema.safeParse(value);
  if (!parsed.success) {
    for (const zi of parsed.error.issues) {
      issue(jsonPath(['serve', ...zi.path.map(pathKey)]), zodMessage(zi, isRecord(value) ? value : {}));
    }
    return undefined;
  }
  const serve: ServeConfig = { ...parsed.data };
  if (serve.token !== undefined) {
    const { value: token, missing } = expandReporting(
      serve.token,
      env,
      (message) => issue('serve.token', message),
      (variable) => `set ${variable} or remove serve.token`,
    );
    if (token === '' && missing.length === 0) issue('serve.token', 'expected a non-empty token');
    serve.token = token;
  }
  return serve;
}

function parseStore(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  issue: (path: string, message: string) => void,
): StoreConfig | undefined {
  const parsed = StoreSchema.safeParse(value);
  if (!parsed.success) {
    for (const zi of parsed.error.issues)
      issue(jsonPath(['store', ...zi.path.map(pathKey)]), zodMessage(zi, isRecord(value) ? value : {}));
    return undefined;
  }
  const store: StoreConfig = { ...parsed.data };
  if (store.url !== undefined)
    store.url = expandReporting(
      store.url,
      env,
      (message) => issue('store.url', message),
      (variable) => `set ${variable} or remove store.url`,
    ).value;
  return store;
}

/**
 * `${VAR}` expansion that reports each unset variable as "uses ${VAR}, which is not set", followed by
 * `remedy` (what to do about it) when given.
 */
function expandReporting(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  report: (message: string) => void,
  remedy?: (variable: string) => string,
): ExpandResult {
  const result = expandVars(value, env);
  for (const variable of result.missing) {
    report(`uses \${${variable}}, which is not set${remedy ? `; ${remedy(variable)}` : ''}`);
  }
  return result;
}

/** Why a server name is refused, or undefined; the same rule as SERVER_NAME_PATTERN, with a reason. */
export function checkServerName(name: string): string | undefined {
  const why = 'it becomes part of every tool name, mcp__<server>__<tool>';
  if (name.length === 0) return `server name must not be empty (${why})`;
  if (!SERVER_NAME.test(name)) {
    return `server name ${JSON.stringify(name)} may only contain letters, digits, "_" and "-" (${why})`;
  }
  if (name.includes('__')) return `server name ${JSON.stringify(name)} must not contain "__" (${why})`;
  if (name.endsWith('_')) return `server name ${JSON.stringify(name)} must not end with "_" (${why})`;
  return undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function zodMessage(issue: z.core.$ZodIssue, entry: Record<string, unknown>): string {
  const value = valueAt(entry, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${article(issue.expected)}, got ${describe(value)}`;
    case 'too_small':
      if (issue.origin === 'string') return `expected a non-empty string, got ${describe(value)}`;
      return `expected a number > 0, got ${describe(value)}`;
    case 'too_big':
      return `expected a number <= ${issue.maximum}, got ${describe(value)}`;
    case 'unrecognized_keys':
      return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_value':
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}, got ${describe(value)}`;
    default:
      return `${issue.message}${value === undefined ? '' : `, got ${describe(value)}`}`;
  }
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  if (expected === 'array') return 'an array';
  if (expected === 'object' || expected === 'record') return 'an object';
  return `a ${expected}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function pathKey(key: PropertyKey): string | number {
  return typeof key === 'number' ? key : String(key);
}

/** `mcpServers.docs.url`, `mcpServers["my server"].args[0]`. */
export function jsonPath(parts: ReadonlyArray<string | number>): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out;
}

function jsonErrorWithPosition(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const match = /position (\d+)/.exec(message);
  if (!match) return message;
  const offset = Number(match[1]);
  const before = text.slice(0, offset).split('\n');
  return `${message.replace(/ at position \d+.*$/, '')} at line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** A top-level section checked against its schema: the parsed value, or undefined with every problem reported. */
function section<T extends z.ZodType>(
  root: Record<string, unknown>,
  key: string,
  schema: T,
  issue: (path: string, message: string) => void,
): z.infer<T> | undefined {
  const value = root[key];
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const zi of parsed.error.issues)
    issue(jsonPath([key, ...zi.path.map(pathKey)]), zodMessage(zi, isRecord(value) ? value : {}));
  return undefined;
}
