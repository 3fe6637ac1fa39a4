import {
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type Implementation,
  type ReadResourceResult,
  UriTemplate,
} from '@modelcontextprotocol/client';
import leven from 'leven';
import { DEFAULT_LIMITS, type Limits } from '../config/limits.js';
import type { ServerConfig, TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import type { EraCache } from '../store/era-cache.js';
import type { OAuthCredentials } from '../store/oauth-credentials.js';
import { SqliteStore, type TackStore } from '../store/store.js';
import { secretValuesOf } from '../util/secrets.js';
import { VERSION } from '../version.js';
import { Catalog, type CatalogTool } from './catalog.js';
import {
  type CallRound,
  type ConnectionChange,
  type ConnectionOptions,
  type RequestCallOptions,
  type RoundRequest,
  type RoundResult,
  ServerConnection,
  type ServerStatus,
} from './connection.js';
import { serverOfToolName } from './names.js';
import type { OAuthOptions } from './oauth.js';
import type { ServerLogLimits } from './server-log.js';

export const TACK_CLIENT_INFO: Implementation = { name: 'tack', version: VERSION };

/** The servers to connect (a configuration), the store, logs, restarts, OAuth and client capabilities. */
export interface HostOptions
  extends Pick<ConnectionOptions, 'restartPolicy' | 'maxMessageBytes' | 'capabilities' | 'configureClient'> {
  /** A loaded configuration (see loadConfig) or just the server entries. */
  config:
    | TackConfig
    | { servers: ServerConfig[]; paths?: TackConfig['paths']; limits?: TackConfig['limits'] | undefined };
  clientInfo?: Implementation;
  /**
   * The store (era verdicts, audit log, OAuth tokens), opened by the caller (`openStore(config.paths)`) and closed
   * by it after the host: the host never opens one. Without it every start probes the era and OAuth tokens last
   * this process only.
   */
  store?: TackStore | undefined;
  /** Where era verdicts are cached; default the store's. `false` turns caching off (every start probes). */
  eraCache?: EraCache | false;
  /** Per-server logs; default `config.paths.logDir`; `false` keeps no log files (stderr tails still work). */
  logDir?: string | false;
  /**
   * How large each server's log grows before it is rotated, and how many rotated files are kept. Default:
   * `limits.serverLogBytes` and `limits.serverLogFiles` of `config` (tack.json), else their defaults.
   */
  logLimits?: ServerLogLimits;
  /**
   * Remote servers that ask for OAuth: whether a login may start here (default not: AUTH_REQUIRED naming
   * `tack auth <server>`) and how its URL reaches the user. Tokens live in the store and are refreshed either way.
   */
  oauth?: OAuthOptions;
}

/** What changed in the host: a server's status, a catalog, a diagnostic, a watched resource. */
export type HostEvent =
  | { type: 'status'; server: string; status: ServerStatus['status'] }
  | { type: 'catalog'; server: string; change: 'tools' | 'resources' | 'prompts' }
  | { type: 'diagnostic'; server: string; message: string }
  /** A resource someone watches (watchResource) changed. */
  | { type: 'resource-updated'; server: string; uri: string };

/**
 * The MCP host: one connection per configured server, all started in parallel, and one catalog over them.
 * Everything the CLI does is a method here. A server that fails is reported in `servers()` and in the errors
 * of calls routed to it; it never blocks the others and never throws out of `start()`.
 */
export class McpHost {
  readonly #connections: Map<string, ServerConnection>;
  readonly #listeners = new Set<(event: HostEvent) => void>();
  /** The store the host uses, when it has one; the gateway writes its audit log there. */
  readonly store: TackStore | undefined;
  #catalog: Catalog | undefined;
  /** Where OAuth tokens go without a store: this process only (a login per run beats none). */
  #memoryStore: SqliteStore | undefined;
  /** Resource templates parsed on first use, once per catalog (the catalog is rebuilt on every change). */
  readonly #uriTemplates = new WeakMap<Catalog, Map<string, UriTemplate>>();
  #closed = false;

  constructor(options: HostOptions) {
    const { config } = options;
    this.store = options.store;
    // The gateway audits calls with upstream error messages, which may quote what the servers were given.
    this.store?.audit.addSecrets(config.servers.flatMap((server) => secretValuesOf(server)));
    const eraCache = options.eraCache === false ? undefined : (options.eraCache ?? this.store?.eraCache);
    const logDir = options.logDir === false ? undefined : (options.logDir ?? config.paths?.logDir);
    const connectionOptions: ConnectionOptions = {
      clientInfo: options.clientInfo ?? TACK_CLIENT_INFO,
      eraCache,
      logDir,
      logProject: options.logDir === undefined && 'projectRoot' in config ? config.projectRoot : undefined,
      logLimits: options.logLimits ?? logLimitsOf(config.limits ?? DEFAULT_LIMITS),
      restartPolicy: options.restartPolicy,
      maxMessageBytes: options.maxMessageBytes,
      jsonDepth: (config.limits ?? DEFAULT_LIMITS).jsonDepth,
      capabilities: options.capabilities,
      configureClient: options.configureClient,
      oauth: { options: options.oauth ?? {}, credentials: () => this.#oauthCredentials() },
      onChange: (connection, change, uri) => this.#onChange(connection, change, uri),
    };
    this.#connections = new Map(
      config.servers.map((server) => [server.name, new ServerConnection(server, connectionOptions)]),
    );
  }

  /** Creates a host and connects every enabled server in parallel. */
  static async start(options: HostOptions): Promise<McpHost> {
    const host = new McpHost(options);
    await host.connectAll();
    return host;
  }

  /** Connects every enabled server in parallel; resolves when each is connected or has failed. */
  async connectAll(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((connection) => connection.start()));
  }

  /** Reconnect one server now, forgetting its failure count. */
  async restart(server: string): Promise<void> {
    await this.connection(server).restart();
  }

  get catalog(): Catalog {
    this.#catalog ??= new Catalog(
      [...this.#connections.values()]
        .filter((c) => c.listed)
        .map((c) => ({
          server: c.name,
          tools: c.tools,
          resources: c.resources,
          resourceTemplates: c.resourceTemplates,
          prompts: c.prompts,
        })),
    );
    return this.#catalog;
  }

  /** Whether `server` is configured (whatever its status); no snapshot is built. */
  has(server: string): boolean {
    return this.#connections.has(server);
  }

  /** Every configured server's state: status, era, counts, error, connect time, sandbox. */
  servers(): ServerStatus[] {
    return [...this.#connections.values()].map((connection) => connection.snapshot());
  }

  /** One server's connection (throws SERVER_UNKNOWN for a name not configured). */
  connection(server: string): ServerConnection {
    const connection = this.#connections.get(server);
    if (!connection) throw unknownServer(server, [...this.#connections.keys()]);
    return connection;
  }

  /**
   * Calls a tool by its model-visible name. A tool-level failure comes back as a result with `isError`
   * (for the model to read); a failed request throws a TackError naming the server and the tool.
   */
  async callTool(
    name: string,
    args?: Record<string, unknown>,
    options: RequestCallOptions = {},
  ): Promise<CallToolResult> {
    const entry = this.catalog.getTool(name);
    if (!entry) throw this.#unknownTool(name);
    return this.connection(entry.server).callTool(entry.definition.name, args, options);
  }

  /** One round of a request to `server` that may ask for input (see ServerConnection.requestRound). */
  async requestRound(
    server: string,
    request: RoundRequest,
    round: CallRound,
    options: RequestCallOptions = {},
  ): Promise<RoundResult> {
    return this.connection(server).requestRound(request, round, options);
  }

  /** Reads a resource; without `server`, the one server that lists the URI (or a template matching it). */
  async readResource(
    uri: string,
    options: RequestCallOptions & { server?: string } = {},
  ): Promise<ReadResourceResult & { server: string }> {
    const server = options.server ?? this.serverForUri(uri);
    const result = await this.connection(server).readResource(uri, options);
    return { ...result, server };
  }

  /** Gets a prompt from a server, with its arguments. */
  async getPrompt(
    server: string,
    prompt: string,
    args?: Record<string, string>,
    options: RequestCallOptions = {},
  ): Promise<GetPromptResult> {
    const connection = this.connection(server);
    try {
      return await connection.getPrompt(prompt, args, options);
    } catch (error) {
      // The server's refusal reads like a bad argument; a name it never listed is worth saying as such.
      const unlisted =
        TackError.isInstance(error) &&
        error.code === 'REQUEST_FAILED' &&
        connection.status === 'connected' &&
        !connection.prompts.some((p) => p.name === prompt);
      if (!unlisted) throw error;
      const names = connection.prompts.map((p) => p.name);
      const near = nearestNames(prompt, names);
      throw new TackError('UNKNOWN_PROMPT', `server "${server}" has no prompt named "${prompt}"`, {
        subject: { server },
        hint:
          names.length === 0
            ? `Server "${server}" offers no prompts.`
            : `${near.length ? `Did you mean ${near.map((n) => `"${n}"`).join(' or ')}? ` : ''}Its prompts: ${names.join(', ')} (\`tack prompts --server ${server}\` shows their arguments).`,
        details: error.details,
        cause: error,
      });
    }
  }

  /** Argument completion on one server (a prompt's or a resource template's argument). */
  async complete(
    server: string,
    params: CompleteRequest['params'],
    options: RequestCallOptions = {},
  ): Promise<CompleteResult> {
    return this.connection(server).complete(params, options);
  }

  /**
   * Hear `resource-updated` events for `uri` on `server` (counted; see ServerConnection.watch). Async all the
   * way, so an unknown server is a rejection a caller's `.catch` sees, never a throw out of the call.
   */
  async watchResource(server: string, uri: string): Promise<void> {
    await this.connection(server).watch(uri);
  }

  /** Stops watching a resource `watchResource` watches. */
  async unwatchResource(server: string, uri: string): Promise<void> {
    await this.connection(server).unwatch(uri);
  }

  /** Subscribe to status, catalog and diagnostic events; returns the unsubscribe function. */
  on(listener: (event: HostEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Closes every connection (stdio servers are stopped). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#connections.values()].map((connection) => connection.close()));
    this.#memoryStore?.closeSync();
  }

  /** `await using host = ...` closes the host at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #oauthCredentials(): OAuthCredentials {
    if (this.store) return this.store.oauth;
    this.#memoryStore ??= SqliteStore.open(':memory:');
    return this.#memoryStore.oauth;
  }

  #onChange(connection: ServerConnection, change: ConnectionChange, uri?: string): void {
    if (change !== 'diagnostic' && change !== 'resource-updated') this.#catalog = undefined;
    const server = connection.name;
    const event: HostEvent =
      change === 'status'
        ? { type: 'status', server, status: connection.status }
        : change === 'diagnostic'
          ? { type: 'diagnostic', server, message: connection.snapshot().diagnostics.at(-1) ?? '' }
          : change === 'resource-updated'
            ? { type: 'resource-updated', server, uri: uri ?? '' }
            : { type: 'catalog', server, change };
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A listener's bug is its own; the host keeps serving.
      }
    }
  }

  #unknownTool(name: string): TackError {
    const server = serverOfToolName(name);
    const connection = server ? this.#connections.get(server) : undefined;
    if (connection && connection.status !== 'connected') {
      const reason = connection.status === 'disabled' ? connection.config.disabledReason : undefined;
      if (reason)
        return new TackError(
          'SERVER_DISABLED',
          `tool "${name}" belongs to server "${connection.name}", which is held back: ${reason}`,
          {
            subject: { server: connection.name, tool: name, file: connection.config.source.file },
            hint: `Review ${connection.config.source.file}, then run \`tack trust\` in the project (or pass --trust-project for one run).`,
          },
        );
      const cause = connection.lastError;
      return new TackError(
        'SERVER_UNAVAILABLE',
        `tool "${name}" belongs to server "${connection.name}", which is ${connection.status}${cause ? `: ${cause.message}` : ''}`,
        { subject: { server: connection.name, tool: name }, hint: cause?.hint, details: cause?.details },
      );
    }
    const near = nearestTools(name, this.catalog.tools);
    return new TackError('UNKNOWN_TOOL', `no tool named "${name}"`, {
      subject: { tool: name },
      hint: near.length
        ? `Did you mean ${near.map((n) => `"${n}"`).join(' or ')}? (\`tack tools\` lists them)`
        : 'Run `tack tools` to list the tools.',
    });
  }

  /**
   * The listing `uri` reads through on `server` (or the one server that lists it): the resource itself, or the
   * template it matches, as the URI (template) the definition guard pins it under. Undefined when no listing
   * covers it (a server may serve URIs it never listed).
   */
  resourceListingFor(
    uri: string,
    server?: string,
  ): { server: string; key: string; template: boolean } | undefined {
    const catalog = this.catalog;
    let owner = server;
    if (owner === undefined)
      try {
        owner = this.serverForUri(uri);
      } catch {
        return undefined;
      }
    const listing = catalog.listingsOf(owner);
    if (!listing) return undefined;
    if (listing.resources.some((r) => r.uri === uri)) return { server: owner, key: uri, template: false };
    const template = listing.resourceTemplates.find(
      (t) => this.#uriTemplate(catalog, t.uriTemplate).match(uri) !== null,
    );
    return template ? { server: owner, key: template.uriTemplate, template: true } : undefined;
  }

  /** The one connected server that lists `uri` or a template matching it; throws UNKNOWN_RESOURCE otherwise. */
  serverForUri(uri: string): string {
    const catalog = this.catalog;
    const listings = catalog.servers;
    const exact = listings.filter((s) => s.resources.some((r) => r.uri === uri));
    const candidates = exact.length
      ? exact
      : listings.filter((s) =>
          s.resourceTemplates.some((t) => this.#uriTemplate(catalog, t.uriTemplate).match(uri) !== null),
        );
    if (candidates.length === 1) return candidates[0]!.server;
    if (candidates.length > 1) {
      throw new TackError(
        'UNKNOWN_RESOURCE',
        `resource "${uri}" is offered by several servers: ${candidates.map((s) => s.server).join(', ')}`,
        {
          subject: { uri },
          hint: 'Name the server (--server).',
        },
      );
    }
    throw new TackError(
      'UNKNOWN_RESOURCE',
      `no connected server lists resource "${uri}" or a template matching it`,
      {
        subject: { uri },
        hint: 'Name the server (--server) to read it anyway, or list resources with `tack resources`.',
      },
    );
  }

  #uriTemplate(catalog: Catalog, template: string): UriTemplate {
    let parsed = this.#uriTemplates.get(catalog);
    if (!parsed) {
      parsed = new Map();
      this.#uriTemplates.set(catalog, parsed);
    }
    let compiled = parsed.get(template);
    if (!compiled) {
      compiled = new UriTemplate(template);
      parsed.set(template, compiled);
    }
    return compiled;
  }
}

export function unknownServer(server: string, configured: readonly string[]): TackError {
  return new TackError('UNKNOWN_SERVER', `no server named "${server}" is configured`, {
    subject: { server },
    hint: `Configured servers: ${configured.join(', ') || '(none)'}.`,
  });
}

/** Up to two names closest to `name` by edit distance, for "did you mean". */
function nearestNames(name: string, names: readonly string[]): string[] {
  return nearest(
    name,
    names.map((candidate) => ({ candidate, distance: leven(name, candidate) })),
  );
}

/**
 * Up to two model-visible tool names closest to `name`. A tool also answers to its server's own name, so a bare
 * `get_forecast` (or a typo of it) finds `mcp__weather__get_forecast`, which the whole name is too far from.
 */
function nearestTools(name: string, tools: readonly CatalogTool[]): string[] {
  return nearest(
    name,
    tools.map((tool) => ({
      candidate: tool.name,
      distance: Math.min(leven(name, tool.name), leven(name, tool.definition.name)),
    })),
  );
}

function nearest(name: string, scored: ReadonlyArray<{ candidate: string; distance: number }>): string[] {
  // An exact match (a bare upstream name) is the answer; near misses beside it would only blur it.
  const exact = scored.some(({ distance }) => distance === 0);
  return scored
    .filter(({ distance }) => (exact ? distance === 0 : distance <= Math.max(3, Math.floor(name.length / 3))))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, 2)
    .map(({ candidate }) => candidate);
}

/** `limits.serverLogBytes` and `limits.serverLogFiles` as a server log takes them. */
export function logLimitsOf(limits: Pick<Limits, 'serverLogBytes' | 'serverLogFiles'>): ServerLogLimits {
  return { maxBytes: limits.serverLogBytes, files: limits.serverLogFiles };
}
