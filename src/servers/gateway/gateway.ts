import { randomUUID } from 'node:crypto';
import type {
  CallToolResult,
  GetPromptResult,
  InputRequest,
  PromptMessage,
  ReadResourceResult,
} from '@modelcontextprotocol/client';
import {
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { errorMessage, TackError } from '../../errors.js';
import type { Catalog } from '../../mcp/catalog.js';
import { type CallRound, type InputRequiredRound, isInputRequired } from '../../mcp/connection.js';
import type { McpHost } from '../../mcp/host.js';
import type { AuditLog, AuditOutcome } from '../../store/audit.js';
import { digest } from '../../util/canonical-json.js';
import { VERSION } from '../../version.js';
import type { Notifier } from '../serve.js';
import { GatewayCall, type InteractionRouter, PENDING_PREFIX } from './interaction.js';
import { GatewayNames } from './names.js';

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
}

/** A client has this long to answer the questions of a call before the call is cancelled upstream. */
const PENDING_TTL_MS = 10 * 60_000;

interface PendingCall {
  call: GatewayCall;
  server: string;
  audit: (outcome: AuditOutcome, detail?: string) => void;
  names: GatewayNames;
  /** The downstream tool name: a retry must name the same tool. */
  tool: string;
  timer: NodeJS.Timeout;
  questions: Array<{ request: unknown; resolve(answer: unknown): void; reject(error: unknown): void }>;
}

const INSTRUCTIONS_CAP = 400;

/**
 * `tack serve`: everything the host holds as one MCP server. Built on the SDK's low-level `Server`, because a
 * gateway passes definitions through as they are (raw JSON Schemas, output schemas, annotations) instead of
 * deriving them from zod. Tools keep the host's model-visible names; prompts are named the same way; resource
 * URIs get the `tack://<server>/` prefix (names.ts). An upstream that fails becomes an `isError` result naming
 * it; the gateway itself never goes down with an upstream.
 */
export class Gateway {
  readonly #host: McpHost;
  readonly #audit: AuditLog | undefined;
  readonly #transport: 'stdio' | 'http';
  readonly #names = new WeakMap<Catalog, GatewayNames>();
  readonly #namespaced: boolean;
  readonly #router: InteractionRouter;
  readonly #pending = new Map<string, PendingCall>();
  #instances = 0;

  constructor(options: GatewayOptions) {
    this.#host = options.host;
    this.#audit = options.audit ?? options.host.store?.audit;
    this.#transport = options.transport;
    this.#router = options.router;
    this.#namespaced = options.namespaced ?? true;
  }

  /** Forwards the host's catalog changes to the clients: a server coming or going changes every list. */
  announceTo(notifier: Notifier): () => void {
    return this.#host.on((event) => {
      if (event.type === 'diagnostic' || (event.type === 'status' && event.status === 'connecting')) return;
      const change = event.type === 'catalog' ? event.change : 'all';
      if (change === 'tools' || change === 'all') notifier.toolsChanged();
      if (change === 'resources' || change === 'all') notifier.resourcesChanged();
      if (change === 'prompts' || change === 'all') notifier.promptsChanged();
    });
  }

  /** One server instance, for one stdio connection or one HTTP request. */
  createServer(era: 'modern' | 'legacy'): Server {
    const server = new Server(
      { name: 'tack-gateway', version: VERSION },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true },
          prompts: { listChanged: true },
          completions: {},
          logging: {},
        },
        instructions: this.#instructions(),
      },
    );
    const host = this.#host;

    server.setRequestHandler('tools/list', async () => ({
      tools: [...this.names().tools].map(([name, tool]) => ({ ...tool.definition, name })),
    }));

    const channel = `${this.#transport}:${++this.#instances}`;
    // The level a 2025-era client set for its session (logging/setLevel); a 2026-07-28 client names one per
    // request. A 2025 client that set none hears everything, as a 2025 server may log without being asked.
    let sessionLogLevel: string | undefined;
    server.setRequestHandler('logging/setLevel', async (request) => {
      sessionLogLevel = request.params.level;
      return {};
    });
    server.setRequestHandler('tools/call', async (request, ctx) => {
      // A 2026-07-28 client answering questions a 2025-era upstream asked it through this gateway.
      const state = era === 'modern' ? ctx.mcpReq.requestState<unknown>() : undefined;
      if (typeof state === 'string' && state.startsWith(PENDING_PREFIX)) {
        return this.#resume(state, request.params.name, ctx);
      }

      const names = this.names();
      const entry = names.tools.get(request.params.name);
      if (!entry) return this.#unknownTool(request.params.name, names);
      const args = request.params.arguments ?? {};
      const call = new GatewayCall(channel, era, ctx);
      call.logLevel =
        era === 'modern'
          ? (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY]?.toString()
          : (sessionLogLevel ?? 'debug');
      const started = Date.now();
      const audit = (outcome: AuditOutcome, detail?: string) =>
        this.#record({
          at: new Date(started).toISOString(),
          client: this.#clientLabel(server, ctx.mcpReq.envelope, era),
          server: entry.server,
          tool: entry.definition.name,
          argsSha256: digest(args),
          durationMs: Date.now() - started,
          outcome,
          detail,
        });
      // A modern client retrying after an upstream's input_required brings that upstream's answers along.
      const first = {
        inputResponses: era === 'modern' ? ctx.mcpReq.inputResponses : undefined,
        requestState: typeof state === 'string' ? state : undefined,
      };
      // Ask upstream for logs at the client's level (a 2026-07-28 server logs only when a request asks).
      const meta = call.logLevel ? { [LOG_LEVEL_META_KEY]: call.logLevel } : undefined;
      call.start(
        this.#router.track(entry.server, call, () =>
          this.#drive(entry.server, entry.name, args, call, { ...first, meta }),
        ),
      );
      return this.#answer(call, request.params.name, entry.server, audit, names);
    });

    server.setRequestHandler('resources/list', async () => {
      const names = this.names();
      return {
        resources: host.catalog.servers.flatMap((s) =>
          s.resources.map((resource) => ({ ...resource, uri: names.uri(s.server, resource.uri) })),
        ),
      };
    });

    server.setRequestHandler('resources/templates/list', async () => {
      const names = this.names();
      return {
        resourceTemplates: host.catalog.servers.flatMap((s) =>
          s.resourceTemplates.map((template) => ({
            ...template,
            uriTemplate: names.uri(s.server, template.uriTemplate),
          })),
        ),
      };
    });

    server.setRequestHandler('resources/read', async (request, ctx) => {
      const names = this.names();
      const target = names.parseUri(request.params.uri);
      try {
        const { server: from, ...result } = await host.readResource(target.uri, {
          signal: ctx.mcpReq.signal,
          ...(target.server ? { server: target.server } : {}),
        });
        const clean = withoutReservedMeta(result);
        return { ...clean, contents: clean.contents.map((c) => ({ ...c, uri: names.uri(from, c.uri) })) };
      } catch (error) {
        throw wireError(error, request.params.uri);
      }
    });

    server.setRequestHandler('completion/complete', async (request, ctx) => {
      const names = this.names();
      const { ref } = request.params;
      const target =
        ref.type === 'ref/prompt'
          ? ((p) => p && { server: p.server, ref: { type: 'ref/prompt' as const, name: p.prompt.name } })(
              names.prompts.get(ref.name),
            )
          : this.#templateTarget(names, ref.uri);
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

    server.setRequestHandler('prompts/list', async () => ({
      prompts: [...this.names().prompts].map(([name, { prompt }]) => ({ ...prompt, name })),
    }));

    server.setRequestHandler('prompts/get', async (request, ctx) => {
      const names = this.names();
      const target = names.prompts.get(request.params.name);
      if (!target)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
      try {
        const result = withoutReservedMeta(
          await host.getPrompt(target.server, target.prompt.name, request.params.arguments, {
            signal: ctx.mcpReq.signal,
          }),
        );
        return {
          ...result,
          messages: result.messages.map(
            (message): PromptMessage => ({
              ...message,
              content: names.content(target.server, [message.content])[0]!,
            }),
          ),
        };
      } catch (error) {
        throw wireError(error);
      }
    });
    return server;
  }

  /**
   * Calls upstream round after round until it answers. A 2026-07-28 upstream asking for input is relayed to
   * a 2026-07-28 client as is (it retries with the answers); a 2025-era client is asked here instead.
   */
  async #drive(
    server: string,
    name: string,
    args: Record<string, unknown>,
    call: GatewayCall,
    first: CallRound,
  ): Promise<CallToolResult | InputRequiredRound> {
    let round = first;
    for (;;) {
      const result = await this.#host.callToolRound(name, args, round, {
        signal: call.abort.signal,
        onProgress: (progress) => {
          const token = call.ctx.mcpReq._meta?.progressToken;
          if (token === undefined) return;
          void call.ctx.mcpReq
            .notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } })
            .catch(() => {});
        },
      });
      if (!isInputRequired(result) || call.era === 'modern') return result;
      const answers: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(result.inputRequests ?? {}))
        answers[key] = await call.ask(request);
      round = { inputResponses: answers, requestState: result.requestState, meta: first.meta };
      this.#log(server, `answered ${Object.keys(answers).length} input request(s) for ${name}`);
    }
  }

  /** What the downstream gets now: the result, an upstream failure, or the questions it must answer. */
  async #answer(
    call: GatewayCall,
    tool: string,
    server: string,
    audit: (outcome: AuditOutcome, detail?: string) => void,
    names: GatewayNames,
  ): Promise<CallToolResult | InputRequiredRound> {
    const outcome = await call.next();
    call.detach();
    if (outcome.kind === 'done') {
      if (isInputRequired(outcome.result)) return outcome.result; // relayed; the client's retry is a new call
      audit(outcome.result.isError ? 'tool-error' : 'ok');
      const clean = withoutReservedMeta(outcome.result);
      return { ...clean, content: names.content(server, clean.content ?? []) };
    }
    if (outcome.kind === 'failed') {
      const { error } = outcome;
      audit(call.abort.signal.aborted ? 'cancelled' : 'failed', errorMessage(error));
      // The upstream answered with a JSON-RPC error: that is its answer, passed on as such (same code).
      // Only an upstream the gateway could not get an answer from becomes an isError result.
      const cause = TackError.isInstance(error) ? error.cause : undefined;
      if (cause instanceof ProtocolError) throw wireError(error);
      return upstreamFailure(
        server,
        errorMessage(error),
        TackError.isInstance(error) ? error.hint : undefined,
      );
    }
    // A 2025-era upstream asked a 2026-07-28 client: answer input_required, keep the call waiting here.
    const id = `${PENDING_PREFIX}${randomUUID()}`;
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      call.expire('the client did not answer the input request in time');
    }, PENDING_TTL_MS);
    timer.unref();
    this.#pending.set(id, { call, tool, server, audit, names, timer, questions: outcome.questions });
    return {
      resultType: 'input_required',
      inputRequests: Object.fromEntries(
        outcome.questions.map((q, i) => [`q${i}`, q.request as InputRequest]),
      ),
      requestState: id,
    };
  }

  /** The client's answers to a pending call's questions: hand them upstream and wait for what comes next. */
  async #resume(id: string, tool: string, ctx: ServerContext): Promise<CallToolResult | InputRequiredRound> {
    const pending = this.#pending.get(id);
    if (pending && pending.tool !== tool) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `This request state belongs to a call of another tool.`,
      );
    }
    if (!pending) {
      return {
        isError: true,
        content: [
          {
            type: 'text',
            text: 'This call waited too long for its input and was cancelled; call the tool again.',
          },
        ],
      };
    }
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    pending.call.follow(ctx);
    const answers = ctx.mcpReq.inputResponses ?? {};
    pending.questions.forEach((question, i) => {
      const answer = answers[`q${i}`];
      if (answer === undefined) question.reject(new Error('the client sent no answer'));
      else question.resolve(answer);
    });
    return this.#answer(pending.call, pending.tool, pending.server, pending.audit, pending.names);
  }

  #log(server: string, message: string): void {
    this.#host.connection(server).log.note(`gateway: ${message}`);
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

  /** The names of the current catalog (cached per catalog: one build per change, not per request). */
  names(): GatewayNames {
    const catalog = this.#host.catalog;
    let names = this.#names.get(catalog);
    if (!names) {
      names = new GatewayNames(catalog, this.#namespaced);
      this.#names.set(catalog, names);
    }
    return names;
  }

  /** A tool the catalog does not have: an upstream that is down is named; anything else is unknown. */
  #unknownTool(name: string, names: GatewayNames): CallToolResult {
    const server = names.serverOf(name);
    const down = this.#host.servers().find((s) => s.name === server && s.status !== 'connected');
    if (down)
      return upstreamFailure(down.name, down.error?.message ?? `server is ${down.status}`, down.error?.hint);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }

  #instructions(): string {
    const servers = this.#host.servers().filter((s) => s.status === 'connected');
    const lines = servers.map((s) => {
      const text = (s.instructions ?? '').replace(/\s+/g, ' ').trim();
      const capped = text.length > INSTRUCTIONS_CAP ? `${text.slice(0, INSTRUCTIONS_CAP - 3)}...` : text;
      return `- ${s.name}${capped ? `: ${capped}` : ''}`;
    });
    return [
      `tack gateway in front of ${servers.length} MCP server${servers.length === 1 ? '' : 's'}.${
        this.#namespaced
          ? ' Tools and prompts are named <server>__<name>; resource URIs tack://<server>/<uri>.'
          : ''
      }`,
      ...lines,
    ].join('\n');
  }

  #clientLabel(
    server: Server,
    envelope: Record<string, unknown> | undefined,
    era: 'modern' | 'legacy',
  ): string {
    const info = (era === 'modern' ? envelope?.[CLIENT_INFO_META_KEY] : server.getClientVersion()) as
      | { name?: string; version?: string }
      | undefined;
    return `${info?.name ?? 'unknown'}${info?.version ? `@${info.version}` : ''} (${this.#transport}, ${era})`;
  }

  #record(entry: Parameters<AuditLog['record']>[0]): void {
    try {
      this.#audit?.record(entry);
    } catch {
      // An audit write that fails (disk full) must not fail the call it describes.
    }
  }
}

/** Reserved `_meta` keys describe the upstream link (its server info), not this gateway's answer. */
function withoutReservedMeta<T extends { _meta?: Record<string, unknown> | undefined }>(result: T): T {
  if (!result._meta) return result;
  const meta = Object.fromEntries(
    Object.entries(result._meta).filter(([key]) => !key.startsWith('io.modelcontextprotocol/')),
  );
  const { _meta: _, ...rest } = result;
  return (Object.keys(meta).length ? { ...rest, _meta: meta } : rest) as T;
}

/** What the downstream model reads when an upstream fails: which server, what happened, what to try. */
function upstreamFailure(server: string, message: string, hint: string | undefined): CallToolResult {
  const text = `Upstream server "${server}" failed: ${message}${hint ? ` (${hint})` : ''}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** A failed read or prompt keeps the upstream's JSON-RPC code when it had one, and names the server. */
function wireError(error: unknown, uri?: string): ProtocolError {
  const cause = TackError.isInstance(error) ? error.cause : undefined;
  if (cause instanceof ProtocolError) {
    return new ProtocolError(cause.code, `${errorMessage(error)}`, cause.data);
  }
  if (TackError.isInstance(error) && error.code === 'UNKNOWN_RESOURCE') {
    return new ProtocolError(ProtocolErrorCode.ResourceNotFound, error.message, uri ? { uri } : undefined);
  }
  return new ProtocolError(ProtocolErrorCode.InternalError, errorMessage(error));
}
