import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectSkillsTrusted, projectTrustWarning, resolveProjectTrust } from '../config/apply-trust.js';
import type { TackConfig } from '../config/load.js';
import { KnowledgeBase } from '../knowledge/knowledge.js';
import { type ComputationRuntimes, openRuntimes } from '../knowledge/runtimes.js';
import type { Catalog } from '../mcp/catalog.js';
import { McpHost } from '../mcp/host.js';
import { configuredSemanticRanker } from '../search/embeddings.js';
import type { SemanticRanker } from '../search/semantic.js';
import { ToolTermCache } from '../search/term-cache.js';
import { DefinitionGuard, guardOptions } from '../security/pins.js';
import { type SkillEntry, SkillLibrary } from '../skills/library.js';
import { loadSkills } from '../skills/load.js';
import { type SkillToolPins, skillToolNotices, toolCatalogView } from '../skills/tool-check.js';
import { openStore } from '../store/open.js';
import type { TackStore } from '../store/store.js';
import { pushAll } from '../util/arrays.js';
import { SecretMasker, secretValuesOf } from '../util/secrets.js';
import { sendWarning, type WarningSink } from '../util/warnings.js';
import type { ApproveMode, Approver } from './approval.js';
import type { AgentEvent } from './events.js';
import { resolveFallbacks } from './fallback.js';
import { type AgentInteraction, INTERACTIVE_CAPABILITIES, interactionHandlers } from './interaction.js';
import { type ResolvedModel, resolveModel } from './model.js';
import type { AgentOptions, Limits } from './options.js';
import { AgentSession } from './session.js';
import { openForResume, type ResumeState, Transcript } from './transcript.js';

export interface StartAgentOptions {
  config: TackConfig;
  /** `provider:id`, or a model made by any AI SDK provider; default `agent.model` from the configuration. */
  model?: string | ResolvedModel;
  /** Fallback models (`provider:id`, in order); default `agent.fallback` from the configuration. */
  fallback?: readonly string[];
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  approve?: ApproveMode;
  approver?: Approver;
  interaction?: AgentInteraction;
  /**
   * Trust the project for this run: its servers, hooks, allow rules and skills (.agents/skills, .claude/skills),
   * as `--trust-project` does. Without it they wait until the user runs `tack trust` (or TACK_TRUST_PROJECT=1).
   * Ignored when `config` already went through applyProjectTrust.
   */
  trustProject?: boolean;
  /** Overrides of the configuration's limits. */
  limits?: Partial<Limits>;
  /** A session id or its prefix: continue it (its transcript, its history). */
  resume?: string;
  /** Keep no transcript (tests, throwaway runs). Default: one per session in the state directory. */
  transcript?: boolean;
  /** Connect the configured MCP servers (default true). */
  servers?: boolean;
  /** Every event of the session, as it happens. */
  onEvent?: (event: AgentEvent) => void;
  /**
   * Told the MCP host as soon as it exists, before its servers connect: a UI can show each server coming up
   * (`host.on` status events) while startAgent waits for them.
   */
  onHost?: (host: McpHost) => void;
  /**
   * Where warnings raised while starting go (a project held back until trusted, a store that would not open);
   * default nowhere. What happens during the session arrives as `notice` events instead.
   */
  onWarning?: WarningSink;
  /** More options for the session (tools, filters, hooks...); its groups (approvals, pins, context) add to these. */
  session?: Partial<AgentOptions>;
}

export interface RunningAgent {
  session: AgentSession;
  host: McpHost | undefined;
  transcript: Transcript | undefined;
  /** The store the session uses (closed with the agent); undefined when it would not open. */
  store: TackStore | undefined;
  /** The skills offered (after pinning): what a UI lists. */
  skills: SkillLibrary;
  /** Set when the session was resumed: what was found and repaired in its transcript. */
  resumed?: ResumeState;
  /** Ends the session and closes the host, the transcript and the store. */
  close(): Promise<void>;
}

/**
 * What a session's records mask (util/secrets.ts): the configured servers' env and header values, the values of
 * tack's own secret-looking variables (the model's API key), and key shapes.
 */
export function secretMaskerFor(
  config: Pick<TackConfig, 'servers'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SecretMasker {
  return new SecretMasker({
    values: [
      ...config.servers.flatMap((server) => secretValuesOf(server)),
      ...secretValuesOf({ env }, { namedOnly: true }),
    ],
  });
}

/**
 * Pins every skill's SKILL.md read from disk (security/pins.ts reviewSkills); a project or configured skill whose
 * file changed since it was approved is left out of the library until `tack pins accept skill <name>`.
 */
async function pinSkills(
  library: SkillLibrary,
  guard: DefinitionGuard,
  notices: string[],
  tools?: { catalog: Catalog; pins: SkillToolPins },
): Promise<SkillLibrary> {
  // Skills served over MCP, and files unreadable now (activation will say so), are not pinned here.
  const read: Array<{ skill: SkillEntry; text: string }> = [];
  for (const skill of library.skills) {
    if (skill.remote) continue;
    try {
      read.push({ skill, text: await readFile(skill.file, 'utf8') });
    } catch {}
  }
  const verdicts = await guard.reviewSkills(
    read.map(({ skill, text }) => ({
      identity: `skill ${skill.dir}`,
      name: skill.name,
      text,
      own: skill.scope === 'user',
    })),
  );
  const held = new Set<SkillEntry>();
  read.forEach(({ skill }, i) => {
    const verdict = verdicts[i];
    if (verdict === 'repinned') notices.push(`your skill ${skill.name} changed; its new SKILL.md is pinned`);
    if (typeof verdict !== 'object') return;
    held.add(skill);
    notices.push(
      `held back: ${verdict.reason} (${skill.file}); review with \`tack pins diff skill ${skill.name}\`, accept with \`tack pins accept skill ${skill.name}\``,
    );
  });
  if (tools) {
    const checked = read.filter(({ skill }) => !held.has(skill));
    pushAll(notices, await skillToolNotices(checked, toolCatalogView(tools.catalog), tools.pins));
  }
  return held.size === 0
    ? library
    : new SkillLibrary(
        library.skills.filter((skill) => !held.has(skill)),
        library.warnings,
      );
}

/**
 * Everything `tack run` and `tack chat` set up, as one call: the model (a clear error when none is configured),
 * the MCP servers with elicitation and sampling routed to the user, skills, knowledge and its computation
 * runtimes, the store's session index, the transcript (new, or the resumed one) and the session.
 */
export async function startAgent(options: StartAgentOptions): Promise<RunningAgent> {
  const env = options.env ?? process.env;
  const model =
    typeof options.model === 'object'
      ? options.model
      : resolveModel(options.model ?? options.config.agent.model, env);
  // The store is an index; the transcript files are the record. Without it, resume scans the folder.
  const store = await openStore(options.config, options.onWarning);
  let opened: Awaited<ReturnType<typeof openRecords>>;
  try {
    opened = await openRecords(options, store);
  } catch (error) {
    // A PostgreSQL store's pool would keep the process alive.
    await store?.close();
    throw error;
  }
  const { config, secrets, sessionsDir, transcript, resumed } = opened;
  const agent = config.agent;
  let host: McpHost | undefined;
  let runtimes: ComputationRuntimes | undefined;
  let session: AgentSession | undefined;
  // A process that exits with the session open (process.exit after a second Ctrl-C, a signal the CLI turns into
  // an exit) still writes its end: exit listeners run synchronously, and so does the transcript's write.
  const onExit = () => session?.close('the process exited');
  const cleanup = async () => {
    process.off('exit', onExit);
    session?.close();
    transcript?.close();
    await runtimes?.close();
    await host?.close();
    await transcript?.indexWritten();
    await store?.close();
  };
  try {
    if (options.servers !== false && config.servers.length > 0) {
      host = new McpHost({
        config,
        ...(store ? { store } : {}),
        capabilities: INTERACTIVE_CAPABILITIES,
        // A person who can answer questions can also log in to a server that asks for OAuth.
        oauth: { interactive: options.interaction !== undefined },
        configureClient: interactionHandlers(options.interaction, model),
      });
      options.onHost?.(host);
      await host.connectAll();
    }
    const fallback = resolveFallbacks(options.fallback ?? agent.fallback, model, env);
    const notices: string[] = [...fallback.notices];
    const loaded = await loadSkills({
      config,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      trustProject: options.trustProject === true || projectSkillsTrusted(config),
      ...(host ? { host } : {}),
    });
    const skills = store
      ? await pinSkills(
          loaded,
          new DefinitionGuard(store.pins, guardOptions(config, store)),
          notices,
          host ? { catalog: host.catalog, pins: store.pins } : undefined,
        )
      : loaded;
    const knowledge =
      config.knowledge.bundles.length > 0
        ? await KnowledgeBase.load(config.knowledge.bundles, {
            cacheDir: join(config.paths.stateDir, 'indexes'),
            onWarning: options.onWarning,
          })
        : undefined;
    runtimes = knowledge ? await openRuntimes(config.knowledge.runtimes) : undefined;
    const limits: Partial<Limits> = {
      ...(agent.maxSteps ? { maxSteps: agent.maxSteps } : {}),
      ...(agent.maxInputTokens ? { maxInputTokens: agent.maxInputTokens } : {}),
      ...(agent.maxOutputTokens ? { maxOutputTokens: agent.maxOutputTokens } : {}),
      ...(agent.maxCostUsd ? { maxCostUsd: agent.maxCostUsd } : {}),
      ...(agent.wallTimeSeconds ? { wallTimeMs: agent.wallTimeSeconds * 1000 } : {}),
      ...options.limits,
    };
    const base: AgentOptions = {
      model,
      ...(fallback.models.length > 0 ? { fallback: fallback.models } : {}),
      cwd: options.cwd ?? process.cwd(),
      env,
      config,
      ...(host ? { host } : {}),
      skills,
      ...(knowledge ? { knowledge } : {}),
      ...(runtimes ? { computations: runtimes } : {}),
      limits,
      approvals: {
        mode: options.approve ?? agent.approve ?? 'ask',
        ...(options.approver ? { approver: options.approver } : {}),
        permissions: config.permissions,
      },
      ...(agent.hooks ? { hooks: agent.hooks } : {}),
      context: {
        ...(agent.contextWindow ? { window: agent.contextWindow } : {}),
        ...(agent.outputCapTokens ? { outputCapTokens: agent.outputCapTokens } : {}),
      },
      ...(agent.prices ? { prices: agent.prices } : {}),
      toolSearch: {
        ...(agent.toolSearch ? { mode: agent.toolSearch } : {}),
        terms: new ToolTermCache(join(config.paths.stateDir, 'indexes', 'tool-terms.idx')),
        ...(options.onWarning ? { onWarning: options.onWarning } : {}),
        ...(store ? { examples: store.toolExamples } : {}),
        ...semanticOption(config.toolSearch.embeddings, store?.toolEmbeddings, options.onWarning),
        alwaysLoad: (tool) => {
          const entry = config.servers.find((s) => s.name === tool.server)?.alwaysLoad ?? false;
          return (
            entry === true ||
            (Array.isArray(entry) && entry.some((n) => n === tool.serverToolName || n === tool.name))
          );
        },
      },
      ...(agent.codeMode ? { codeMode: { mode: agent.codeMode } } : {}),
      transcript: transcript ?? false,
      secrets,
      notices,
      sessionsDir,
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      ...(resumed
        ? { resume: { history: resumed.messages, from: resumed.sessionId, usage: resumed.usage } }
        : {}),
    };
    session = await AgentSession.create(withSessionOptions(base, options.session));
    process.on('exit', onExit);
    return { session, host, transcript, store, skills, ...(resumed ? { resumed } : {}), close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** The project trust, the transcript (new, or the one resumed) and what the session needs to mask. */
async function openRecords(options: StartAgentOptions, store: TackStore | undefined) {
  const env = options.env ?? process.env;
  // The library path holds back an untrusted project's servers, hooks, allow rules and skills as the CLI does;
  // without the store no record can be read, so the project counts as untrusted.
  const config = await resolveProjectTrust(options.config, {
    records: store?.trustedProjects,
    env,
    trustProject: options.trustProject === true,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  if (config !== options.config) {
    const message = projectTrustWarning(config);
    if (message) sendWarning(options.onWarning, { code: 'PROJECT_UNTRUSTED', message });
  }
  const sessionsDir = join(config.paths.stateDir, 'sessions');
  const secrets = secretMaskerFor(options.config, env);
  let resumed: ResumeState | undefined;
  let transcript: Transcript | undefined;
  if (options.resume) {
    const found = await openForResume(sessionsDir, options.resume, store?.sessions, { secrets });
    resumed = found.state;
    if (options.transcript === false) found.transcript.close();
    else transcript = found.transcript;
  } else if (options.transcript !== false) {
    transcript = Transcript.create({
      dir: sessionsDir,
      secrets,
      ...(store ? { index: store.sessions } : {}),
    });
  }
  return { config, secrets, sessionsDir, transcript, resumed };
}

/** The caller's session options over startAgent's: a group (approvals, pins, context) is merged field by field. */
function withSessionOptions(base: AgentOptions, extra: Partial<AgentOptions> | undefined): AgentOptions {
  if (!extra) return base;
  return {
    ...base,
    ...extra,
    approvals: { ...base.approvals, ...extra.approvals },
    pins: { ...base.pins, ...extra.pins },
    context: { ...base.context, ...extra.context },
  };
}

/** `toolSearch.embeddings` as DeferredTools' semantic ranker, when configured. */
function semanticOption(...args: Parameters<typeof configuredSemanticRanker>): { semantic?: SemanticRanker } {
  const semantic = configuredSemanticRanker(...args);
  return semantic ? { semantic } : {};
}
