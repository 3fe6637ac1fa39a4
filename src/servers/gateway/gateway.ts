import { Server } from '@modelcontextprotocol/server';
import type { McpHost } from '../../mcp/host.js';
import type { SemanticRanker } from '../../search/semantic.js';
import type { ToolTermCache } from '../../search/term-cache.js';
import { DefinitionGuard, guardOptions } from '../../security/pins.js';
import type { AuditSink } from '../../store/audit.js';
import type { WarningSink } from '../../util/warnings.js';
import { VERSION } from '../../version.js';
import type { FastPath, Notifier } from '../serve.js';
import { type Downstream, GatewayCore } from './core.js';
import { Exchanges } from './exchange.js';
import { gatewayFastPath } from './fast-call.js';
import { registerHandlers } from './handlers/register.js';
import type { InteractionRouter } from './interaction.js';
import type { GatewayNames } from './names.js';
import type { GatewaySkills } from './skills.js';

export interface GatewayOptions {
  host: McpHost;
  /** Where every call is recorded; default the host's store, if it has one. */
  audit?: AuditSink | undefined;
  /** `stdio` or `http`, recorded with the client in the audit log. */
  transport: 'stdio' | 'http';
  /** Routes the input requests of 2025-era upstreams; its `configure` must be the host's configureClient. */
  router: InteractionRouter;
  /** Prefix names with their server (default); `false` serves upstream names as they are (names.ts). */
  namespaced?: boolean | undefined;
  /** How long a client has to answer an upstream's question (default 10 minutes). */
  answerTimeoutMs?: number | undefined;
  /** tack's own skills, offered through the Skills extension next to the upstreams (skills.ts). */
  skills?: GatewaySkills | undefined;
  /**
   * Serve `search_tools` + `call_tool` instead of the full tool list: `on`, `auto` (past 40 tools), `off`
   * (default). For hosts that load every definition eagerly.
   */
  toolSearch?: 'auto' | 'on' | 'off' | undefined;
  /** tack.json `permissions.deny`: matching calls are refused and audited as `denied` (core.ts). */
  deny?: readonly string[] | undefined;
  /**
   * Also serve run_code (a script calling the served tools, each call through the same path as a client's
   * tools/call) and code_api (its declarations). Default off.
   */
  codeMode?: boolean | undefined;
  /** Semantic ranking fused into search_tools (tack.json `toolSearch.embeddings`); lexical while it is down. */
  semantic?: SemanticRanker | undefined;
  /** Tokens of the catalog kept between runs (search/term-cache.ts), for search_tools over a large catalog. */
  toolTerms?: ToolTermCache | undefined;
  /**
   * Pin upstream definitions on first sight and hold back changed or flagged ones (security/pins.ts), so a rug
   * pull upstream does not reach the gateway's clients. Default: on when the host has a store.
   */
  pinning?: boolean | undefined;
  /** Characters of one definition the poisoning scanner reads (tack.json `limits.scanBytes`). */
  scanBytes?: number | undefined;
  /** tack.json `scan.judge`: the judge whose cached verdicts decide definitions the scan leaves in doubt. */
  scanJudge?: { model: string } | undefined;
  /** The project served, noted with the pins' identities (`tack pins list` shows a project's own). */
  project?: string | undefined;
  /** Where the gateway's warnings go (a definition held back, once each); default nowhere. */
  onWarning?: WarningSink | undefined;
  /** Where the configuration came from, said in the instructions when it names no server (start.ts). */
  configuredFrom?: string | undefined;
}

/**
 * `tack serve`: everything the host holds as one MCP server. Built on the SDK's low-level `Server`, because a
 * gateway passes definitions through as they are (raw JSON Schemas, output schemas, annotations) instead of
 * deriving them from zod. Names: names.ts. One handler per method (handlers/); requests that may ask for input
 * (tools, prompts, resource reads) run as exchanges (exchange.ts). An upstream that cannot be reached becomes an
 * `isError` result naming it; an upstream's own JSON-RPC error passes on as one; the gateway itself never goes
 * down with an upstream.
 */
export class Gateway {
  readonly #core: GatewayCore;
  /** The downstream of each live instance, for the fast path to serve a 2025-era session's request as its own. */
  readonly #downstreams = new WeakMap<Server, Downstream>();
  readonly #router: InteractionRouter;
  /** Plain `tools/call` requests over HTTP, served without an SDK instance (fast-call.ts). */
  readonly fastPath: FastPath;

  constructor(options: GatewayOptions) {
    const store = options.host.store;
    this.#router = options.router;
    this.#core = new GatewayCore({
      host: options.host,
      audit: options.audit ?? options.host.store?.audit,
      transport: options.transport,
      namespaced: options.namespaced ?? true,
      exchanges: new Exchanges(options.host, options.router, options.answerTimeoutMs),
      answerTimeoutMs: options.answerTimeoutMs,
      skills: options.skills,
      toolSearch: options.toolSearch ?? 'off',
      codeMode: options.codeMode ?? false,
      deny: options.deny,
      semantic: options.semantic,
      toolTerms: options.toolTerms,
      guard:
        options.pinning !== false && store
          ? new DefinitionGuard(
              store.pins,
              guardOptions(
                {
                  limits: { scanBytes: options.scanBytes },
                  scan: { judge: options.scanJudge },
                  projectRoot: options.project,
                },
                store,
              ),
            )
          : undefined,
      onWarning: options.onWarning,
      configuredFrom: options.configuredFrom,
    });
    this.fastPath = gatewayFastPath(this.#core, (instance) => this.#downstreams.get(instance));
  }

  /** Forwards the host's catalog changes to the clients: a server coming or going changes every list. */
  announceTo(notifier: Notifier): () => void {
    return this.#core.host.on((event) => {
      if (event.type === 'diagnostic' || (event.type === 'status' && event.status === 'connecting')) return;
      if (event.type === 'resource-updated') {
        notifier.resourceUpdated(this.names().uri(event.server, event.uri));
        return;
      }
      // A new catalog is reviewed now rather than by the next request (which waits for it meanwhile).
      void this.ready();
      const change = event.type === 'catalog' ? event.change : 'all';
      if (change === 'tools' || change === 'all') notifier.toolsChanged();
      if (change === 'resources' || change === 'all') notifier.resourcesChanged();
      if (change === 'prompts' || change === 'all') notifier.promptsChanged();
    });
  }

  /**
   * The names of the current catalog (cached per catalog: one build per change, not per request). Before the
   * guard has reviewed a new catalog, its names without held definitions marked: enough for URIs and clashes.
   */
  names(): GatewayNames {
    return this.#core.names();
  }

  /**
   * Reviews the current catalog if that was not done yet: the HTTP server calls it before every request, so the
   * instances it makes serve reviewed instructions. A store that cannot be read is left for the request to meet.
   */
  async ready(): Promise<void> {
    await this.#core.view().catch(() => {});
  }

  /**
   * The input schema of the tool served as `name`, as tools/list serves it: what a 2026-07-28 client derives
   * its SEP-2243 `Mcp-Param-*` headers from (serveHttp checks them). Nothing while tool search is on: the list
   * then holds only the meta-tools, which declare no header parameters, and a client calling an upstream tool
   * by name never saw its schema.
   */
  toolInputSchema(name: string): unknown {
    // The reviewed view: serveHttp awaits `ready()` before it asks.
    const view = this.#core.current();
    if (!view || view.searching) return undefined;
    return view.names.tools.get(name)?.definition.inputSchema;
  }

  /** One server instance, for one stdio connection, one 2025-era HTTP session, or one 2026-07-28 request. */
  createServer(era: 'modern' | 'legacy'): Server {
    // A new connection reviews the catalog now (if that is not done yet), so its first call can take the fast path.
    void this.ready();
    const server = new Server(
      { name: 'tack-gateway', version: VERSION },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true, subscribe: true },
          prompts: { listChanged: true },
          completions: {},
          logging: {},
        },
        instructions: this.#core.instructions(),
      },
    );
    const downstream: Downstream = {
      server,
      era,
      logLevel: undefined,
      clientCapabilities: () => server.getClientCapabilities() as Record<string, unknown> | undefined,
      clientInfo: () => server.getClientVersion(),
    };
    this.#downstreams.set(server, downstream);
    // Upstreams holding this client's roots ask again (roots.ts); others never learn of it.
    server.setNotificationHandler('notifications/roots/list_changed', () =>
      this.#router.rootsChanged(downstream),
    );
    this.#core.skills?.attach(server, era);
    registerHandlers(this.#core, server, downstream);
    return server;
  }
}
