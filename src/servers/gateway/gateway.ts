import type {
  CallToolResult,
  ClientCapabilities,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { errorMessage, TackError } from '../../errors.js';
import type { Catalog } from '../../mcp/catalog.js';
import type { CallRound } from '../../mcp/connection.js';
import { hostDefinitions } from '../../mcp/definitions.js';
import type { McpHost } from '../../mcp/host.js';
import {
  CALL_TOOL_DEFINITION,
  downServers,
  formatToolHits,
  groupByServer,
  quoteQueries,
  SEARCH_TOOLS_DEFINITION,
  searchToolsInput,
} from '../../search/meta-tools.js';
import { hybridSearch, type SemanticRanker } from '../../search/semantic.js';
import {
  type SearchableTool,
  searchableTool,
  serverProfiles,
  ToolSearchIndex,
} from '../../search/tool-index.js';
import { DefinitionGuard, type HeldDefinition } from '../../security/pins.js';
import type { AuditLog, AuditOutcome } from '../../store/audit.js';
import { digest } from '../../util/canonical-json.js';
import { sendWarning, type WarningSink } from '../../util/warnings.js';
import { VERSION } from '../../version.js';
import { type Notifier, trackSubscriptions } from '../serve.js';
import { tracedToolCall } from '../telemetry.js';
import { type Exchange, Exchanges } from './exchange.js';
import { GatewayCall, type InteractionRouter } from './interaction.js';
import { GatewayNames } from './names.js';
import { answeredWithError, upstreamFailure, wireError, withoutReservedMeta } from './results.js';
import type { GatewaySkills } from './skills.js';

export interface GatewayOptions {
  host: McpHost;
  /** Where every call is recorded; default the host's store, if it has one. */
  audit?: AuditLog | undefined;
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
  /** Semantic ranking fused into search_tools (tack.json `toolSearch.embeddings`); lexical while it is down. */
  semantic?: SemanticRanker | undefined;
  /**
   * Pin upstream definitions on first sight and hold back changed or flagged ones (security/pins.ts), so a rug
   * pull upstream does not reach the gateway's clients. Default: on when the host has a store.
   */
  pinning?: boolean | undefined;
  /** Characters of one definition the poisoning scanner reads (tack.json `limits.scanBytes`). */
  scanBytes?: number | undefined;
  /** Where the gateway's warnings go (a definition held back, once each); default nowhere. */
  onWarning?: WarningSink | undefined;
}

/** Past this many upstream tools, `toolSearch: 'auto'` serves the two meta-tools instead of the list. */
const AUTO_SEARCH_TOOLS = 40;

const INSTRUCTIONS_CAP = 400;

const META_TOOLS: Tool[] = [SEARCH_TOOLS_DEFINITION, CALL_TOOL_DEFINITION].map(
  (d) => JSON.parse(JSON.stringify(d)) as Tool,
);

/**
 * What the gateway serves for one catalog, each part computed on first use: the host rebuilds its catalog on
 * every status or list change, so this is one computation per change, not one per request or instance.
 */
interface CatalogView {
  readonly catalog: Catalog;
  readonly names: GatewayNames;
  /** Upstream definitions held back in this catalog (not served): why, by `server kind name`. */
  readonly held: ReadonlyMap<string, HeldDefinition>;
  instructions?: string;
  tools?: Tool[];
  resources?: Resource[];
  resourceTemplates?: ResourceTemplate[];
  prompts?: Prompt[];
  search?: { index: ToolSearchIndex; tools: SearchableTool[] };
}

/** One downstream connection (stdio, a 2025-era HTTP session) or request (2026-07-28 HTTP). */
interface Downstream {
  server: Server;
  era: 'modern' | 'legacy';
  /** The level a 2025-era client set with logging/setLevel for its session. */
  logLevel: string | undefined;
}

/**
 * `tack serve`: everything the host holds as one MCP server. Built on the SDK's low-level `Server`, because a
 * gateway passes definitions through as they are (raw JSON Schemas, output schemas, annotations) instead of
 * deriving them from zod. Names: names.ts. Requests that may ask for input (tools, prompts, resource reads)
 * run as exchanges (exchange.ts). An upstream that cannot be reached becomes an `isError` result naming it;
 * an upstream's own JSON-RPC error passes on as one; the gateway itself never goes down with an upstream.
 */
export class Gateway {
  readonly #host: McpHost;
  readonly #audit: AuditLog | undefined;
  readonly #transport: 'stdio' | 'http';
  /** Built once per catalog (the guard's review is a store round trip); the latest, for the synchronous readers. */
  readonly #views = new WeakMap<Catalog, Promise<CatalogView>>();
  #latest: CatalogView | undefined;
  readonly #namespaced: boolean;
  readonly #exchanges: Exchanges;
  readonly #answerTimeoutMs: number | undefined;
  readonly #skills: GatewaySkills | undefined;
  readonly #toolSearch: 'auto' | 'on' | 'off';
  readonly #semantic: SemanticRanker | undefined;
  readonly #guard: DefinitionGuard | undefined;
  /** Held definitions already reported (each catalog rebuild reviews again). */
  readonly #reported = new Set<string>();
  readonly #onWarning: WarningSink | undefined;

  constructor(options: GatewayOptions) {
    const store = options.host.store;
    this.#guard =
      options.pinning !== false && store
        ? new DefinitionGuard(store.pins, { scanBytes: options.scanBytes })
        : undefined;
    this.#toolSearch = options.toolSearch ?? 'off';
    this.#semantic = options.semantic;
    this.#onWarning = options.onWarning;
    this.#skills = options.skills;
    this.#host = options.host;
    this.#audit = options.audit ?? options.host.store?.audit;
    this.#transport = options.transport;
    this.#namespaced = options.namespaced ?? true;
    this.#answerTimeoutMs = options.answerTimeoutMs;
    this.#exchanges = new Exchanges(options.host, options.router, options.answerTimeoutMs);
  }

  /** Forwards the host's catalog changes to the clients: a server coming or going changes every list. */
  announceTo(notifier: Notifier): () => void {
    return this.#host.on((event) => {
      if (event.type === 'diagnostic' || (event.type === 'status' && event.status === 'connecting')) return;
      if (event.type === 'resource-updated') {
        notifier.resourceUpdated(this.names().uri(event.server, event.uri));
        return;
      }
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
    const catalog = this.#host.catalog;
    if (this.#latest?.catalog === catalog) return this.#latest.names;
    return new GatewayNames(catalog, this.#namespaced, () => false);
  }

  /**
   * The input schema of the tool served as `name`, as tools/list serves it: what a 2026-07-28 client derives
   * its SEP-2243 `Mcp-Param-*` headers from (serveHttp checks them). Nothing while tool search is on: the list
   * then holds only the meta-tools, which declare no header parameters, and a client calling an upstream tool
   * by name never saw its schema.
   */
  async toolInputSchema(name: string): Promise<unknown> {
    const view = await this.#view();
    if (this.#searching(view)) return undefined;
    return view.names.tools.get(name)?.definition.inputSchema;
  }

  /** Whether this catalog is served as search_tools + call_tool. */
  #searching(view: CatalogView): boolean {
    if (this.#toolSearch === 'off') return false;
    return this.#toolSearch === 'on' || view.names.tools.size > AUTO_SEARCH_TOOLS;
  }

  async #searchTools(
    input: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const args = searchToolsInput(input);
    if ('error' in args) return { isError: true, content: [{ type: 'text', text: args.error }] };
    const view = await this.#view();
    if (!view.search) {
      const tools = [...view.names.tools].map(([name, tool]) =>
        searchableTool(name, tool.server, tool.definition),
      );
      view.search = {
        tools,
        index: ToolSearchIndex.build(tools, { servers: serverProfiles(this.#host.servers()) }),
      };
    }
    const { hits, semantic } = await hybridSearch(
      view.search.index,
      view.search.tools,
      args.queries,
      args.k,
      this.#semantic,
      {
        ...(signal ? { signal } : {}),
      },
    );
    const grouped = groupByServer(hits);
    const text = formatToolHits(
      quoteQueries(args.queries),
      grouped,
      downServers(this.#host.servers()),
      'Run one with call_tool.',
    );
    return {
      content: [{ type: 'text', text }],
      structuredContent: {
        tools: grouped.map((h) => ({
          name: h.tool.name,
          server: h.tool.server,
          description: h.tool.description ?? '',
          score: h.score,
        })),
        semantic,
      },
    };
  }

  /**
   * What is served for the current catalog, reviewed by the guard first: nothing of a new catalog is served before
   * its definitions are checked against the pins (a store that cannot be read fails the request, not open).
   */
  async #view(): Promise<CatalogView> {
    const catalog = this.#host.catalog;
    const pending = this.#views.get(catalog);
    if (pending) {
      const view = await pending;
      // A held definition accepted with `tack pins accept` (or through another instance sharing the store) is
      // served from the next request: one store read per server with held definitions, only while any is held.
      if (view.held.size === 0 || !(await this.#releasedSafely(view))) return view;
      if (this.#views.get(catalog) !== pending) return this.#view();
    }
    const building = this.#build(catalog);
    this.#views.set(catalog, building);
    building.then(
      (view) => {
        if (this.#views.get(catalog) === building) this.#latest = view;
      },
      () => {
        // Not kept: the next request reviews again (the store may be back).
        if (this.#views.get(catalog) === building) this.#views.delete(catalog);
      },
    );
    return building;
  }

  /** Whether something held was released; a store that cannot say keeps it held. */
  async #releasedSafely(view: CatalogView): Promise<boolean> {
    try {
      return (await this.#guard?.released([...view.held.values()])) === true;
    } catch {
      return false;
    }
  }

  async #build(catalog: Catalog): Promise<CatalogView> {
    const held = new Map<string, HeldDefinition>();
    const review = await this.#guard?.reviewAll(hostDefinitions(this.#host, catalog));
    for (const h of review?.held ?? []) {
      held.set(`${h.server} ${h.kind} ${h.name}`, h);
      if (this.#reported.has(`${h.identity} ${h.kind} ${h.name} ${h.sha256}`)) continue;
      this.#reported.add(`${h.identity} ${h.kind} ${h.name} ${h.sha256}`);
      sendWarning(this.#onWarning, {
        code: 'DEFINITION_HELD',
        message: `held back: ${h.reason} (server ${h.server}); review with \`tack pins diff ${h.server}\``,
        server: h.server,
      });
    }
    const names = new GatewayNames(catalog, this.#namespaced, (kind, server, name) =>
      held.has(`${server} ${kind} ${name}`),
    );
    return { catalog, names, held };
  }

  /** One server instance, for one stdio connection, one 2025-era HTTP session, or one 2026-07-28 request. */
  createServer(era: 'modern' | 'legacy'): Server {
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
        instructions: this.#instructions(),
      },
    );
    const host = this.#host;
    const downstream: Downstream = { server, era, logLevel: undefined };
    this.#skills?.attach(server, era);

    // A 2025-era client subscribes per URI; the gateway watches the upstream resource for as long as it does.
    // (A 2026-07-28 client names URIs in its listen filter, which the SDK keeps to itself: not forwarded.)
    // Unwatching uses the target that was watched, whatever the catalog says by then.
    const watching = new Map<string, { server: string; uri: string }>();
    trackSubscriptions(server, era, (uri, subscribed) => {
      if (subscribed) {
        const target = watching.has(uri) ? undefined : this.#resourceTarget(this.names(), uri);
        if (!target) return;
        watching.set(uri, target);
        // A watch that failed counted nothing upstream, so there is nothing to unwatch later.
        host.watchResource(target.server, target.uri).catch(() => {
          if (watching.get(uri) === target) watching.delete(uri);
        });
        return;
      }
      const target = watching.get(uri);
      if (target && watching.delete(uri))
        void host.unwatchResource(target.server, target.uri).catch(() => {});
    });
    server.onclose = () => {
      // unwatchResource is async: a target that cannot be unwatched rejects alone, and the others still go.
      for (const target of watching.values())
        void host.unwatchResource(target.server, target.uri).catch(() => {});
      watching.clear();
    };

    server.setRequestHandler('logging/setLevel', async (request) => {
      downstream.logLevel = request.params.level;
      return {};
    });

    server.setRequestHandler('tools/list', async () => {
      const view = await this.#view();
      if (this.#searching(view)) return { tools: META_TOOLS };
      view.tools ??= [...view.names.tools].map(([name, tool]) => ({ ...tool.definition, name }));
      return { tools: view.tools };
    });

    server.setRequestHandler('tools/call', async (request, ctx) => {
      // The reviewed catalog: a held tool is unknown here, whatever the host's catalog holds.
      const view = await this.#view();
      const names = view.names;
      if (this.#searching(view)) {
        if (request.params.name === SEARCH_TOOLS_DEFINITION.name)
          return this.#searchTools(request.params.arguments, ctx.mcpReq.signal);
        if (request.params.name === CALL_TOOL_DEFINITION.name) {
          // call_tool names the tool to run: from here on it is that call, audited and routed as one.
          const { name, arguments: args } = (request.params.arguments ?? {}) as {
            name?: unknown;
            arguments?: unknown;
          };
          if (typeof name !== 'string' || (args !== undefined && (typeof args !== 'object' || args === null)))
            return {
              isError: true,
              content: [
                {
                  type: 'text',
                  text: 'call_tool expects {"name": "<a name from search_tools>", "arguments": {...}}',
                },
              ],
            };
          request.params.name = name;
          request.params.arguments = (args ?? {}) as Record<string, unknown>;
        }
      }
      const key = `tools/call ${request.params.name}`;
      const entry = names.tools.get(request.params.name);
      if (!entry && !this.#exchanges.isPending(this.#state(ctx, era))) {
        return this.#unknownTool(request.params.name, view);
      }
      const args = request.params.arguments ?? {};
      const started = Date.now();
      // Awaited before the answer goes out: a call answered is a call whose audit row is written.
      const audit = async (outcome: AuditOutcome, detail?: string) => {
        if (!entry) return;
        await this.#record({
          at: new Date(started).toISOString(),
          client: this.#clientLabel(downstream, ctx),
          server: entry.server,
          tool: entry.definition.name,
          argsSha256: digest(args),
          durationMs: Date.now() - started,
          outcome,
          detail,
        });
      };
      const run = async () =>
        (await this.#exchange(
          downstream,
          ctx,
          key,
          entry && {
            server: entry.server,
            request: { method: 'tools/call', name: entry.definition.name, arguments: args },
            key,
            finish: async (result) => {
              const done = withoutReservedMeta(result as CallToolResult);
              await audit(done.isError ? 'tool-error' : 'ok');
              return { ...done, content: names.content(entry.server, done.content ?? []) };
            },
            fail: async (error, cancelled) => {
              await audit(cancelled ? 'cancelled' : 'failed', errorMessage(error));
              if (answeredWithError(error)) throw wireError(error);
              return upstreamFailure(
                entry.server,
                errorMessage(error),
                TackError.isInstance(error) ? error.hint : undefined,
              );
            },
          },
        )) as CallToolResult;
      if (!entry) return run();
      return tracedToolCall(
        {
          tool: request.params.name,
          server: entry.server,
          upstreamTool: entry.definition.name,
          era,
          transport: this.#transport,
        },
        run,
        (result) => (result.isError ? 'tool-error' : 'ok'),
      );
    });

    server.setRequestHandler('resources/list', async () => {
      const view = await this.#view();
      view.resources ??= view.catalog.servers.flatMap((s) =>
        s.resources.map((resource) => ({ ...resource, uri: view.names.uri(s.server, resource.uri) })),
      );
      return { resources: view.resources };
    });

    server.setRequestHandler('resources/templates/list', async () => {
      const view = await this.#view();
      view.resourceTemplates ??= [
        ...(this.#skills?.templates ?? []),
        ...view.catalog.servers.flatMap((s) =>
          s.resourceTemplates.map((template) => ({
            ...template,
            uriTemplate: view.names.uri(s.server, template.uriTemplate),
          })),
        ),
      ];
      return { resourceTemplates: view.resourceTemplates };
    });

    server.setRequestHandler('resources/read', async (request, ctx) => {
      // skill:// is tack's own (its skills); in flat mode it wins over an upstream's skill:// URIs.
      if (this.#skills?.owns(request.params.uri)) {
        return this.#skills.read(request.params.uri).catch((error: unknown) => {
          throw wireError(error, request.params.uri);
        });
      }
      const names = (await this.#view()).names;
      const key = `resources/read ${request.params.uri}`;
      let target: { server: string; uri: string } | undefined;
      try {
        target = this.#resolveResource(names, request.params.uri);
      } catch (error) {
        if (!this.#exchanges.isPending(this.#state(ctx, era))) throw wireError(error, request.params.uri);
      }
      return (await this.#exchange(
        downstream,
        ctx,
        key,
        target && {
          server: target.server,
          request: { method: 'resources/read', uri: target.uri },
          key,
          finish: (result) => {
            const done = withoutReservedMeta(result as ReadResourceResult);
            return {
              ...done,
              contents: done.contents.map((c) => ({ ...c, uri: names.uri(target.server, c.uri) })),
            };
          },
          fail: (error) => {
            throw wireError(error, request.params.uri);
          },
        },
      )) as ReadResourceResult;
    });

    server.setRequestHandler('prompts/list', async () => {
      const view = await this.#view();
      view.prompts ??= [...view.names.prompts].map(([name, { prompt }]) => ({ ...prompt, name }));
      return { prompts: view.prompts };
    });

    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const names = (await this.#view()).names;
      const key = `prompts/get ${request.params.name}`;
      const target = names.prompts.get(request.params.name);
      if (!target && !this.#exchanges.isPending(this.#state(ctx, era))) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
      }
      return (await this.#exchange(
        downstream,
        ctx,
        key,
        target && {
          server: target.server,
          request: { method: 'prompts/get', name: target.prompt.name, arguments: request.params.arguments },
          key,
          finish: (result) => {
            const done = withoutReservedMeta(result as GetPromptResult);
            return {
              ...done,
              messages: done.messages.map((m) => ({
                ...m,
                content: names.content(target.server, [m.content])[0]!,
              })),
            };
          },
          fail: (error) => {
            throw wireError(error);
          },
        },
      )) as GetPromptResult;
    });

    server.setRequestHandler('completion/complete', async (request, ctx) => {
      const names = (await this.#view()).names;
      const { ref } = request.params;
      const prompt = ref.type === 'ref/prompt' ? names.prompts.get(ref.name) : undefined;
      const target = prompt
        ? { server: prompt.server, ref: { type: 'ref/prompt' as const, name: prompt.prompt.name } }
        : ref.type === 'ref/resource'
          ? this.#templateTarget(names, ref.uri)
          : undefined;
      // Nothing matches: no completions, which a client must accept for any argument.
      if (!target) return { completion: { values: [] } };
      try {
        return withoutReservedMeta(
          await host.complete(
            target.server,
            { ...request.params, ref: target.ref },
            { signal: ctx.mcpReq.signal },
          ),
        );
      } catch (error) {
        throw wireError(error);
      }
    });
    return server;
  }

  /**
   * Runs one downstream request as an exchange, or resumes the call its request state names. `exchange` is
   * undefined only for a resumption (the name may no longer be in the catalog; the waiting call knows its own).
   */
  async #exchange(downstream: Downstream, ctx: ServerContext, key: string, exchange: Exchange | undefined) {
    const state = this.#state(ctx, downstream.era);
    if (this.#exchanges.isPending(state)) return this.#exchanges.resume(state, key, ctx);
    if (!exchange) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Nothing to serve for ${key}`);
    const call = new GatewayCall(downstream.era, ctx, this.#answerTimeoutMs);
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    call.logLevel =
      downstream.era === 'modern'
        ? envelope?.[LOG_LEVEL_META_KEY]?.toString()
        : (downstream.logLevel ?? 'debug');
    // What the client said of itself goes upstream with the request: the level it wants logs at (a
    // 2026-07-28 server logs only when a request asks) and its capabilities, so an upstream asks only for
    // input this client can give, or refuses the way it would refuse the client itself.
    const capabilities: ClientCapabilities | undefined =
      downstream.era === 'modern'
        ? (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
        : downstream.server.getClientCapabilities();
    call.capabilities = capabilities;
    const meta = {
      ...(call.logLevel ? { [LOG_LEVEL_META_KEY]: call.logLevel } : {}),
      ...(capabilities ? { [CLIENT_CAPABILITIES_META_KEY]: capabilities } : {}),
    };
    // A 2026-07-28 client retrying after an upstream's input_required brings that upstream's answers along.
    const first: CallRound = {
      inputResponses: downstream.era === 'modern' ? ctx.mcpReq.inputResponses : undefined,
      requestState: typeof state === 'string' ? state : undefined,
      meta: Object.keys(meta).length ? meta : undefined,
    };
    return this.#exchanges.run(exchange, call, first);
  }

  /** The request state a 2026-07-28 retry carries (opaque to the gateway unless it names a waiting call). */
  #state(ctx: ServerContext, era: 'modern' | 'legacy'): unknown {
    return era === 'modern' ? ctx.mcpReq.requestState<unknown>() : undefined;
  }

  /**
   * The upstream server and URI a downstream resource URI names: the server its prefix names, or else the one
   * server that offers the URI. Throws when there is none (ResourceNotFoundError, or the host's TackError).
   */
  #resolveResource(names: GatewayNames, uri: string): { server: string; uri: string } {
    const target = names.parseUri(uri);
    const server = target.server ?? this.#host.serverForUri(target.uri);
    if (!this.#host.has(server)) {
      const servers = this.#host.servers().map((s) => s.name);
      throw new ResourceNotFoundError(
        uri,
        `Resource ${uri} not found: tack gateway has no server "${server}" (servers: ${servers.join(', ') || 'none'})`,
      );
    }
    return { server, uri: target.uri };
  }

  /** The upstream server and URI a downstream resource URI names, if any server offers it. */
  #resourceTarget(names: GatewayNames, uri: string): { server: string; uri: string } | undefined {
    try {
      return this.#resolveResource(names, uri);
    } catch {
      return undefined;
    }
  }

  /** The upstream server and template a (gateway) resource template URI names. */
  #templateTarget(
    names: GatewayNames,
    uri: string,
  ): { server: string; ref: { type: 'ref/resource'; uri: string } } | undefined {
    const target = names.parseUri(uri);
    const server =
      target.server ??
      this.#host.catalog.servers.find((s) => s.resourceTemplates.some((t) => t.uriTemplate === target.uri))
        ?.server;
    return server ? { server, ref: { type: 'ref/resource', uri: target.uri } } : undefined;
  }

  /** A tool the catalog does not have: an upstream that is down is named; anything else is unknown. */
  #unknownTool(name: string, view: CatalogView): CallToolResult {
    const server = view.names.serverOf(name);
    const tool = view.names.heldTools.get(name);
    const held = tool && view.held.get(`${tool.server} tool ${tool.definition.name}`);
    if (held)
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: `${name} is unavailable: ${held.reason}. It is held back until the user reviews it on the gateway's machine (\`tack pins diff ${held.server}\`, \`tack pins accept ${held.server}\`).`,
          },
        ],
      };
    const down = this.#host.servers().find((s) => s.name === server && s.status !== 'connected');
    if (down)
      return upstreamFailure(down.name, down.error?.message ?? `server is ${down.status}`, down.error?.hint);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }

  /**
   * The instructions of the reviewed catalog. A catalog the guard has not reviewed yet (it changed between
   * `ready()` and this instance) is described without any server's instructions, which may be held.
   */
  #instructions(): string {
    const view = this.#latest;
    if (view?.catalog === this.#host.catalog) {
      view.instructions ??= this.#describe(view.held);
      return view.instructions;
    }
    return this.#describe(undefined);
  }

  /**
   * Reviews the current catalog if that was not done yet: the HTTP server calls it before every request, so the
   * instances it makes serve reviewed instructions. A store that cannot be read is left for the request to meet.
   */
  async ready(): Promise<void> {
    await this.#view().catch(() => {});
  }

  /** The instructions: the connected servers with theirs, capped; how names are formed; tack's own skills. */
  #describe(held: ReadonlyMap<string, HeldDefinition> | undefined): string {
    const servers = this.#host.servers().filter((s) => s.status === 'connected');
    const lines = servers.map((s) => {
      const text =
        !held || held.has(`${s.name} instructions `)
          ? ''
          : (s.instructions ?? '').replace(/\s+/g, ' ').trim();
      const capped = text.length > INSTRUCTIONS_CAP ? `${text.slice(0, INSTRUCTIONS_CAP - 3)}...` : text;
      return `- ${s.name}${capped ? `: ${capped}` : ''}`;
    });
    const naming = this.#namespaced
      ? ' Tools and prompts are named <server>__<name>; resource URIs tack://<server>/<uri>.'
      : '';
    const skills = this.#skills
      ? [`- tack's own ${this.#skills.skills} Agent Skills: skills/list, skill://<name>/SKILL.md`]
      : [];
    return [
      `tack gateway in front of ${servers.length} MCP server${servers.length === 1 ? '' : 's'}.${naming}`,
      ...lines,
      ...skills,
    ].join('\n');
  }

  #clientLabel(downstream: Downstream, ctx: ServerContext): string {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const info = (
      downstream.era === 'modern' ? envelope?.[CLIENT_INFO_META_KEY] : downstream.server.getClientVersion()
    ) as { name?: string; version?: string } | undefined;
    return `${info?.name ?? 'unknown'}${info?.version ? `@${info.version}` : ''} (${this.#transport}, ${downstream.era})`;
  }

  async #record(entry: Parameters<AuditLog['record']>[0]): Promise<void> {
    try {
      await this.#audit?.record(entry);
    } catch (error) {
      // An audit write that fails (disk full, the database down) must not fail the call it describes; it is said.
      sendWarning(this.#onWarning, {
        code: 'AUDIT_FAILED',
        message: `audit row not written for ${entry.server}/${entry.tool}: ${errorMessage(error)}`,
        server: entry.server,
      });
    }
  }
}
