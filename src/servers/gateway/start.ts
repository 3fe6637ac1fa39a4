import { join } from 'node:path';
import type { TackConfig } from '../../config/load.js';
import { type HostOptions, McpHost } from '../../mcp/host.js';
import { configuredSemanticRanker } from '../../search/embeddings.js';
import { ToolTermCache } from '../../search/term-cache.js';
import type { SkillLibrary } from '../../skills/library.js';
import { SqliteAuditLog } from '../../store/audit.js';
import { openStore } from '../../store/open.js';
import { startTelemetry } from '../../telemetry/start.js';
import type { WarningSink } from '../../util/warnings.js';
import { knowledgeServerConfig } from '../knowledge/entry.js';
import { type HttpOptions, type Served, type StdioOptions, serveHttp, serveOnStdio } from '../serve.js';
import { Gateway } from './gateway.js';
import { GATEWAY_CLIENT_CAPABILITIES, InteractionRouter } from './interaction.js';
import { GatewaySkills } from './skills.js';

/** The configuration to serve, the transport (stdio or HTTP), and what else the gateway offers. */
export interface GatewayServeOptions extends Omit<HostOptions, 'config'> {
  config: TackConfig;
  /** Where warnings go (a store that will not open, a held definition, embeddings down); default nowhere. */
  onWarning?: WarningSink | undefined;
  /** Serve Streamable HTTP (host, port); the token and allowed hosts come from `config.serve`. */
  http?: Pick<HttpOptions, 'host' | 'port' | 'legacySessions'> | undefined;
  /** How long a client has to answer an upstream's question (default 10 minutes). */
  answerTimeoutMs?: number | undefined;
  /**
   * How long a call waits for its turn on an upstream that asks for roots, which serves one client at a time
   * (default 60 s; gateway/roots.ts).
   */
  rootsTurnWaitMs?: number | undefined;
  /** Skills to offer through the Skills extension (those on disk; a server's own are not re-served). */
  skills?: SkillLibrary | undefined;
  /** Serve the configured knowledge bundles as the upstream `knowledge` (default true when there are any). */
  knowledge?: boolean;
  /** Where OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_* variables are read (default process.env). */
  telemetryEnv?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * Answer plain `tools/call` requests over HTTP without an SDK instance (default true; serving/fast-path.ts).
   * False serves everything through the SDK: the tests compare the two.
   */
  fastPath?: boolean | undefined;
  /** Serve stdio on these streams instead of the process's (tests). */
  stdio?: Pick<StdioOptions, 'stdin' | 'stdout'> | undefined;
}

/** A started gateway: its URL over HTTP, its host of upstream servers, and how to stop it. */
export interface RunningGateway extends Served {
  host: McpHost;
  gateway: Gateway;
  /** How many of tack's own skills are served (the library's valid ones the Skills extension took). */
  skills: number;
  /** Graceful shutdown: requests in flight finish (up to `timeoutMs`), then upstreams and the store close. */
  drain(timeoutMs: number): Promise<{ finished: number; cut: number }>;
}

/**
 * `tack serve`: starts every configured server (in parallel, failures reported, never fatal) and serves
 * them as one MCP server over stdio or HTTP.
 */
export async function startGateway(options: GatewayServeOptions): Promise<RunningGateway> {
  const {
    http,
    answerTimeoutMs,
    rootsTurnWaitMs,
    skills: library,
    knowledge,
    onWarning,
    telemetryEnv: _,
    fastPath,
    stdio,
    ...hostOptions
  } = options;
  // The gateway is a composition root: it opens the store unless its caller hands one in, and closes what it opened.
  // OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set; nothing loaded otherwise.
  const telemetry = await startTelemetry(options.telemetryEnv ?? process.env);
  const ownStore = hostOptions.store === undefined ? await openStore(options.config, onWarning) : undefined;
  if (ownStore) hostOptions.store = ownStore;
  const knowledgeEntry = knowledge === false ? undefined : knowledgeServerConfig(options.config);
  if (knowledgeEntry)
    hostOptions.config = { ...options.config, servers: [...options.config.servers, knowledgeEntry] };
  // The router must be on every upstream client before it connects, so servers may ask for input.
  const router = new InteractionRouter({ turnWaitMs: rootsTurnWaitMs });
  const host = await McpHost.start({
    ...hostOptions,
    capabilities: { ...GATEWAY_CLIENT_CAPABILITIES, ...hostOptions.capabilities },
    configureClient: (client, server) => {
      router.configure(client, server);
      hostOptions.configureClient?.(client, server);
    },
  });
  let skills: GatewaySkills | undefined;
  let served: Served;
  let gateway: Gateway;
  try {
    skills = library?.skills.some((s) => !s.remote) ? await GatewaySkills.start(library) : undefined;
    gateway = new Gateway({
      host,
      router,
      transport: http ? 'http' : 'stdio',
      namespaced: options.config.serve.namespace,
      answerTimeoutMs,
      skills,
      toolSearch: options.config.serve.toolSearch,
      codeMode: options.config.serve.codeMode === 'on',
      deny: options.config.permissions.deny,
      semantic: configuredSemanticRanker(
        options.config.toolSearch.embeddings,
        host.store?.toolEmbeddings,
        onWarning,
      ),
      toolTerms: new ToolTermCache(join(options.config.paths.stateDir, 'indexes', 'tool-terms.idx')),
      scanBytes: options.config.limits.scanBytes,
      scanJudge: options.config.scan.judge,
      project: options.config.projectRoot,
      onWarning,
      configuredFrom: configuredFrom(options.config),
    });
    // The catalog reviewed against the pins before anything is served: the first call can take the fast path.
    await gateway.ready();
    served = http
      ? await serveHttp(({ era }) => gateway.createServer(era), {
          ...http,
          token: options.config.serve.token,
          allowedHosts: options.config.serve.allowedHosts,
          toolInputSchema: (tool) => gateway.toolInputSchema(tool),
          jsonDepth: options.config.limits.jsonDepth,
          // Ready when the store answers: an instance that cannot write audit rows or read pins takes no traffic.
          readiness: async () => {
            await host.store?.ping();
          },
          beforeRequest: () => gateway.ready(),
          legacySessions: {
            ...http.legacySessions,
            idPrefix: options.config.serve.instance ?? instanceFromEnv(),
          },
          fastPath: fastPath === false ? undefined : gateway.fastPath,
        })
      : serveOnStdio(({ era }) => gateway.createServer(era), {
          fastPath: fastPath === false ? undefined : gateway.fastPath,
          jsonDepth: options.config.limits.jsonDepth,
          stdin: stdio?.stdin,
          stdout: stdio?.stdout,
        });
  } catch (error) {
    await skills?.close();
    await host.close();
    await ownStore?.close();
    await telemetry.shutdown();
    throw error;
  }
  const stopAnnouncing = gateway.announceTo(served.notifier);
  const release = async () => {
    await skills?.close();
    await host.close();
    // Last: the audit rows of the calls answered are written before the store closes; spans are flushed.
    await ownStore?.close();
    await telemetry.shutdown();
  };
  return {
    ...served,
    host,
    gateway,
    skills: skills?.skills ?? 0,
    close: async () => {
      // The audit rows first: closing the upstreams can take a while, and a kill meanwhile would lose them.
      flushAudit(host);
      stopAnnouncing();
      await served.close();
      await release();
    },
    drain: async (timeoutMs) => {
      stopAnnouncing();
      let drained = { finished: 0, cut: 0 };
      if (served.drain) drained = await served.drain(timeoutMs);
      else await served.close();
      await release();
      return drained;
    },
  };
}

/** TACK_SERVE_INSTANCE: the instance name when one configuration file serves every instance. */
function instanceFromEnv(): string | undefined {
  const name = process.env.TACK_SERVE_INSTANCE;
  return name && /^[A-Za-z0-9-]{1,32}$/.test(name) ? name : undefined;
}

/**
 * Writes the audit rows still waiting (store/audit.ts), synchronously where the engine can (SQLite, on process
 * exit); PostgreSQL rows are committed before their call is answered, so only a started flush is left to finish.
 * A store that cannot take them does not stop a close.
 */
export function flushAudit(host: McpHost): void {
  const audit = host.store?.audit;
  try {
    if (audit instanceof SqliteAuditLog) audit.flushSync();
    else void audit?.flush().catch(() => {});
  } catch {
    // the store closes anyway; the rows are lost with it
  }
}

/**
 * Said to clients when no server is configured: which files were read from which folder, and the form a desktop
 * host needs (it starts `tack serve` in a folder of its own choosing, often not the project).
 */
function configuredFrom(config: TackConfig): string {
  const files = config.sources.map((source) => source.file);
  const read = files.length > 0 ? `tack read ${files.join(', ')}` : 'tack found no configuration file';
  return `No MCP server is configured: ${read} (project folder ${config.projectRoot}). Start it with the file to serve: tack serve --config /path/to/tack.json (or .mcp.json).`;
}
