import { join } from 'node:path';
import type { TackConfig } from '../config/load.js';
import { KnowledgeBase } from '../knowledge/knowledge.js';
import { type ComputationRuntimes, openRuntimes } from '../knowledge/runtimes.js';
import { McpHost } from '../mcp/host.js';
import { loadSkills } from '../skills/load.js';
import { TackStore } from '../store/store.js';
import type { ApproveMode, Approver } from './approval.js';
import type { AgentEvent } from './events.js';
import { type AgentInteraction, INTERACTIVE_CAPABILITIES, interactionHandlers } from './interaction.js';
import { type ResolvedModel, resolveModel } from './model.js';
import { type AgentOptions, AgentSession, type Limits } from './session.js';
import { openForResume, type ResumeState, Transcript } from './transcript.js';

export interface StartAgentOptions {
  config: TackConfig;
  /** `provider:id`, or a model made by any AI SDK provider; default `agent.model` from the configuration. */
  model?: string | ResolvedModel;
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  approve?: ApproveMode;
  approver?: Approver;
  interaction?: AgentInteraction;
  /** Load the project's skills (.agents/skills, .claude/skills). */
  trustProject?: boolean;
  /** Overrides of the configuration's limits. */
  limits?: Partial<Limits>;
  /** A session id or its prefix: continue it (its transcript, its history). */
  resume?: string;
  /** Keep no transcript (tests, throwaway runs). Default: one per session in the state directory. */
  transcript?: boolean;
  /** Connect the configured MCP servers (default true). */
  servers?: boolean;
  onEvent?: (event: AgentEvent) => void;
  /** More options for the session (tools, filters, hooks...). */
  session?: Partial<AgentOptions>;
}

export interface RunningAgent {
  session: AgentSession;
  host: McpHost | undefined;
  transcript: Transcript | undefined;
  /** Set when the session was resumed: what was found and repaired in its transcript. */
  resumed?: ResumeState;
  close(): Promise<void>;
}

/**
 * Everything `tack run` and `tack chat` set up, as one call: the model (a clear error when none is configured),
 * the MCP servers with elicitation and sampling routed to the user, skills, knowledge and its computation
 * runtimes, the store's session index, the transcript (new, or the resumed one) and the session.
 */
export async function startAgent(options: StartAgentOptions): Promise<RunningAgent> {
  const { config } = options;
  const env = options.env ?? process.env;
  const agent = config.agent;
  const model =
    typeof options.model === 'object' ? options.model : resolveModel(options.model ?? agent.model, env);
  let store: TackStore | undefined;
  try {
    store = TackStore.open(config.paths.storeFile);
  } catch {
    // The store is an index; the transcript files are the record. Without it, resume scans the folder.
    store = undefined;
  }
  const sessionsDir = join(config.paths.stateDir, 'sessions');
  let resumed: ResumeState | undefined;
  let transcript: Transcript | undefined;
  if (options.resume) {
    const found = openForResume(sessionsDir, options.resume, store?.sessions);
    resumed = found.state;
    if (options.transcript === false) found.transcript.close();
    else transcript = found.transcript;
  } else if (options.transcript !== false) {
    transcript = Transcript.create({ dir: sessionsDir, ...(store ? { index: store.sessions } : {}) });
  }
  let host: McpHost | undefined;
  let runtimes: ComputationRuntimes | undefined;
  const cleanup = async () => {
    transcript?.close();
    await runtimes?.close();
    await host?.close();
    store?.close();
  };
  try {
    if (options.servers !== false && config.servers.length > 0) {
      host = await McpHost.start({
        config,
        ...(store ? { store } : {}),
        capabilities: INTERACTIVE_CAPABILITIES,
        configureClient: interactionHandlers(options.interaction, model),
      });
    }
    const skills = await loadSkills({
      config,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      trustProject: options.trustProject === true,
      ...(host ? { host } : {}),
    });
    const knowledge =
      config.knowledge.bundles.length > 0 ? await KnowledgeBase.load(config.knowledge.bundles) : undefined;
    runtimes = knowledge ? await openRuntimes(config.knowledge.runtimes) : undefined;
    const limits: Partial<Limits> = {
      ...(agent.maxSteps ? { maxSteps: agent.maxSteps } : {}),
      ...(agent.maxInputTokens ? { maxInputTokens: agent.maxInputTokens } : {}),
      ...(agent.maxOutputTokens ? { maxOutputTokens: agent.maxOutputTokens } : {}),
      ...(agent.maxCostUsd ? { maxCostUsd: agent.maxCostUsd } : {}),
      ...(agent.wallTimeSeconds ? { wallTimeMs: agent.wallTimeSeconds * 1000 } : {}),
      ...options.limits,
    };
    const session = await AgentSession.create({
      model,
      cwd: options.cwd ?? process.cwd(),
      env,
      config,
      ...(host ? { host } : {}),
      skills,
      ...(knowledge ? { knowledge } : {}),
      ...(runtimes ? { computations: runtimes } : {}),
      limits,
      approve: options.approve ?? agent.approve ?? 'ask',
      ...(options.approver ? { approver: options.approver } : {}),
      ...(agent.hooks ? { hooks: agent.hooks } : {}),
      ...(agent.contextWindow ? { contextWindow: agent.contextWindow } : {}),
      ...(agent.outputCapTokens ? { outputCapTokens: agent.outputCapTokens } : {}),
      ...(agent.prices ? { prices: agent.prices } : {}),
      permissions: config.permissions,
      toolSearch: {
        ...(agent.toolSearch ? { mode: agent.toolSearch } : {}),
        ...(store ? { examples: store.toolExamples } : {}),
        alwaysLoad: (tool) => {
          const entry = config.servers.find((s) => s.name === tool.server)?.alwaysLoad ?? false;
          return (
            entry === true ||
            (Array.isArray(entry) && entry.some((n) => n === tool.serverToolName || n === tool.name))
          );
        },
      },
      transcript: transcript ?? false,
      sessionsDir,
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      ...(resumed
        ? { history: resumed.messages, resumedFrom: resumed.sessionId, initialUsage: resumed.usage }
        : {}),
      ...options.session,
    });
    return { session, host, transcript, ...(resumed ? { resumed } : {}), close: cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
