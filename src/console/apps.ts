import { randomBytes } from 'node:crypto';
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { TackError } from '../errors.js';
import type { McpHost } from '../mcp/host.js';
import { appResourceOf, isHeld, visibilityOf } from './catalog.js';
import type { ConsoleContext } from './context.js';
import { argumentsOf, type Route, requiredString } from './routes.js';

/** The MCP Apps extension (SEP-1865, stable 2026-01-26): what the console implements of it. */
export const MCP_APP_MIME = 'text/html;profile=mcp-app';
export const MCP_APPS_PROTOCOL = '2026-01-26';
/** A view's HTML is someone else's document; past this it is refused rather than framed. */
export const MAX_VIEW_BYTES = 2 * 1024 * 1024;
const VIEW_TTL_MS = 60 * 60_000;
const MAX_VIEWS = 100;
/** What a view may hand the host to keep (a `ui/message`, its model context): text for a person to read. */
export const MAX_VIEW_NOTE_BYTES = 64 * 1024;
const MAX_MESSAGES = 50;

export interface AppCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

/** A `ui/message` the person let through: kept with the view, since the console runs no conversation. */
export interface AppMessage {
  at: number;
  role: 'user';
  content: unknown[];
}

/** The view's latest `ui/update-model-context` (each overwrites the one before, as the spec says). */
export interface AppModelContext {
  at: number;
  content?: unknown[];
  structuredContent?: Record<string, unknown>;
}

export interface AppView {
  id: string;
  /** The tool whose definition links the view (model-visible name) and its server. */
  tool: string;
  server: string;
  uri: string;
  html: string;
  /** The origins the resource declares that the policy keeps (the ones it drops are not listed). */
  declared: Required<AppCsp>;
  /** The policy of the sandbox proxy page, which the view's document inherits. */
  csp: string;
  /** The console origin that opened the view: the only one that may frame its proxy and talk to it. */
  hostOrigin: string;
  prefersBorder: boolean | undefined;
  created: number;
  messages: AppMessage[];
  context: AppModelContext | undefined;
}

/**
 * A CSP source the resource declares: an origin with an optional `*.` subdomain wildcard and port, nothing that
 * could end the directive (`;`, `,`, spaces, quotes) or widen it (`*` alone, schemes only, 'unsafe-...').
 */
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$/;

function sources(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string' && ORIGIN.test(s)) : [];
}

/** The resource's declared origins, the malformed ones dropped. */
export function declaredCsp(declared: AppCsp | undefined): Required<AppCsp> {
  return {
    connectDomains: sources(declared?.connectDomains),
    resourceDomains: sources(declared?.resourceDomains),
    frameDomains: sources(declared?.frameDomains),
    baseUriDomains: sources(declared?.baseUriDomains),
  };
}

/**
 * The view's Content-Security-Policy: the spec's restrictive default, widened only by the origins the resource
 * declares in `_meta.ui.csp` (well-formed ones; the rest are dropped), never loosened beyond that. It is the
 * header of the sandbox proxy page on the sandbox origin; the view's own document (the proxy's `srcdoc` frame)
 * inherits it, so the view's scripts run under exactly this policy. `frame-ancestors` lets only the console
 * frame the proxy.
 */
export function viewCsp(declared: AppCsp | undefined, consoleOrigin: string): string {
  const clean = declaredCsp(declared);
  const resource = clean.resourceDomains.join(' ');
  const connect = clean.connectDomains;
  const frames = clean.frameDomains;
  const base = clean.baseUriDomains;
  const withResources = (directive: string, extra: string) =>
    `${directive} 'self' ${extra}${resource ? ` ${resource}` : ''}`.replace(/\s+/g, ' ').trim();
  return [
    "default-src 'none'",
    withResources('script-src', "'unsafe-inline'"),
    withResources('style-src', "'unsafe-inline'"),
    withResources('img-src', 'data:'),
    withResources('font-src', 'data:'),
    withResources('media-src', 'data:'),
    `connect-src ${connect.length > 0 ? connect.join(' ') : "'none'"}`,
    `frame-src ${frames.length > 0 ? frames.join(' ') : "'none'"}`,
    `base-uri ${base.length > 0 ? base.join(' ') : "'self'"}`,
    "object-src 'none'",
    "form-action 'none'",
    `frame-ancestors ${consoleOrigin}`,
  ].join('; ');
}

/**
 * Views the console has framed, by an unguessable id: the id in the sandbox proxy's URL (`/sandbox/<id>` on the
 * sandbox origin) is the only key to its page, and the API keys the view's requests by it.
 */
export class AppViews {
  readonly #views = new Map<string, AppView>();
  readonly #host: McpHost;

  constructor(host: McpHost) {
    this.#host = host;
  }

  /** Reads the `ui://` resource the tool links (`resources/read` on the tool's own server) and registers a view. */
  async open(toolName: string, hostOrigin: string): Promise<AppView> {
    const entry = this.#host.catalog.getTool(toolName);
    if (!entry)
      throw new TackError('UNKNOWN_TOOL', `no tool named ${toolName}`, { subject: { tool: toolName } });
    const uri = appResourceOf(entry.definition);
    if (!uri)
      throw new TackError('USAGE', `${toolName} links no ui:// resource`, {
        hint: 'An MCP App tool names its view in _meta.ui.resourceUri.',
      });
    const read: ReadResourceResult = await this.#host.readResource(uri, { server: entry.server });
    const content = read.contents.find((c) => c.uri === uri) ?? read.contents[0];
    if (!content) throw new TackError('UNKNOWN_RESOURCE', `${uri} returned no content`, { subject: { uri } });
    const mime = (content.mimeType ?? '').replace(/\s+/g, '').toLowerCase();
    if (mime !== MCP_APP_MIME)
      throw new TackError('USAGE', `${uri} is ${content.mimeType ?? 'untyped'}, not ${MCP_APP_MIME}`, {
        subject: { uri },
      });
    const html =
      'text' in content && typeof content.text === 'string'
        ? content.text
        : 'blob' in content && typeof content.blob === 'string'
          ? Buffer.from(content.blob, 'base64').toString('utf8')
          : '';
    if (Buffer.byteLength(html) > MAX_VIEW_BYTES)
      throw new TackError('LIMIT_EXCEEDED', `${uri} is over ${MAX_VIEW_BYTES} bytes`, { subject: { uri } });
    const ui = (content._meta as { ui?: { csp?: AppCsp; prefersBorder?: unknown } } | undefined)?.ui;
    this.#prune();
    const view: AppView = {
      id: randomBytes(24).toString('base64url'),
      tool: toolName,
      server: entry.server,
      uri,
      html,
      declared: declaredCsp(ui?.csp),
      csp: viewCsp(ui?.csp, hostOrigin),
      hostOrigin,
      prefersBorder: typeof ui?.prefersBorder === 'boolean' ? ui.prefersBorder : undefined,
      created: Date.now(),
      messages: [],
      context: undefined,
    };
    this.#views.set(view.id, view);
    return view;
  }

  get(id: string): AppView | undefined {
    const view = this.#views.get(id);
    return view && Date.now() - view.created < VIEW_TTL_MS ? view : undefined;
  }

  /**
   * A tool a view may call: on the view's own server, and visible to apps (`_meta.ui.visibility` includes
   * `app`). Cross-server calls are refused, as the spec requires; the name is the server's own tool name.
   */
  toolFor(view: AppView, serverToolName: string): string {
    const entry = this.#host.catalog.tools.find(
      (t) => t.server === view.server && t.definition.name === serverToolName,
    );
    if (!entry)
      throw new TackError('UNKNOWN_TOOL', `server ${view.server} has no tool ${serverToolName}`, {
        subject: { server: view.server, tool: serverToolName },
      });
    if (!visibilityOf(entry.definition).includes('app'))
      throw new TackError('USAGE', `${serverToolName} is not visible to apps`, {
        subject: { server: view.server, tool: serverToolName },
      });
    return entry.name;
  }

  /** `resources/read` from a view: its own server only. */
  read(view: AppView, uri: string): Promise<ReadResourceResult> {
    return this.#host.readResource(uri, { server: view.server });
  }

  /**
   * A `ui/message` the person let through. The console drives no model turns, so it is kept with the view (the
   * last 50) for the page to show; the caller tells the view it was not sent to a model.
   */
  recordMessage(view: AppView, role: unknown, content: unknown): AppMessage {
    if (role !== 'user')
      throw new TackError('USAGE', `ui/message role must be "user", not ${JSON.stringify(role)}`);
    const blocks = contentBlocks(content, 'ui/message content');
    if (blocks.length === 0) throw new TackError('USAGE', 'ui/message content is empty');
    const message: AppMessage = { at: Date.now(), role: 'user', content: blocks };
    view.messages.push(message);
    if (view.messages.length > MAX_MESSAGES) view.messages.shift();
    return message;
  }

  /** `ui/update-model-context`: replaces the view's context (there is no model turn to hand it to). */
  setContext(view: AppView, content: unknown, structured: unknown): AppModelContext {
    const context: AppModelContext = { at: Date.now() };
    if (content !== undefined) context.content = contentBlocks(content, 'ui/update-model-context content');
    if (structured !== undefined) {
      if (typeof structured !== 'object' || structured === null || Array.isArray(structured))
        throw new TackError('USAGE', 'ui/update-model-context structuredContent must be a JSON object');
      context.structuredContent = structured as Record<string, unknown>;
    }
    if (Buffer.byteLength(JSON.stringify(context)) > MAX_VIEW_NOTE_BYTES)
      throw new TackError('LIMIT_EXCEEDED', `ui/update-model-context is over ${MAX_VIEW_NOTE_BYTES} bytes`);
    view.context = context;
    return context;
  }

  /** After `ui/resource-teardown`: the proxy URL stops answering and the view's requests are refused. */
  close(id: string): boolean {
    return this.#views.delete(id);
  }

  #prune(): void {
    const now = Date.now();
    for (const [id, view] of this.#views) if (now - view.created >= VIEW_TTL_MS) this.#views.delete(id);
    while (this.#views.size >= MAX_VIEWS) this.#views.delete(this.#views.keys().next().value!);
  }
}

/** MCP content blocks as a view sends them: an array of objects with a string `type`, within the size cap. */
function contentBlocks(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value))
    throw new TackError(
      'USAGE',
      `${what} must be an array of content blocks ({"type": "text", "text": ...})`,
    );
  for (const block of value)
    if (typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string')
      throw new TackError('USAGE', `${what}: each block must be an object with a string "type"`);
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_VIEW_NOTE_BYTES)
    throw new TackError('LIMIT_EXCEEDED', `${what} is over ${MAX_VIEW_NOTE_BYTES} bytes`);
  return value;
}

/** The view `id` names, or a USAGE error (400): the page's views outlive neither their TTL nor a teardown. */
function openView(context: ConsoleContext, id: string): AppView {
  const view = context.views.get(id);
  if (!view) throw new TackError('USAGE', 'no such view (it expired): open the app again');
  return view;
}

/** MCP App views: opening a tool's view, and what a view asks of its host (web/src/app-host.ts). */
export const appRoutes: Route[] = [
  {
    method: 'POST',
    path: 'apps/open',
    async json({ context, req, body }) {
      const tool = requiredString(await body(), 'tool');
      const { sandbox, views, host } = context;
      if (!sandbox) throw new TackError('USAGE', 'the MCP Apps sandbox is not listening');
      const opened = await views.open(tool, context.pageOrigin(req));
      return {
        viewId: opened.id,
        proxy: sandbox.urlOf(opened),
        sandboxOrigin: sandbox.origin,
        html: opened.html,
        csp: opened.declared,
        uri: opened.uri,
        server: opened.server,
        prefersBorder: opened.prefersBorder,
        tool: host.catalog.getTool(tool)?.definition,
        held: await isHeld(context, tool),
      };
    },
  },
  {
    method: 'POST',
    path: 'apps/:view/call',
    async json({ context, params, body }) {
      const opened = openView(context, params.view!);
      const fields = await body();
      const tool = context.views.toolFor(opened, requiredString(fields, 'name'));
      const held = await isHeld(context, tool);
      return context.calls.call(tool, argumentsOf(fields.arguments), held, `app ${opened.uri}`);
    },
  },
  {
    method: 'POST',
    path: 'apps/:view/read',
    async json({ context, params, body }) {
      const opened = openView(context, params.view!);
      return context.views.read(opened, requiredString(await body(), 'uri'));
    },
  },
  {
    method: 'POST',
    path: 'apps/:view/message',
    async json({ context, params, body }) {
      const opened = openView(context, params.view!);
      const { role, content } = await body();
      return {
        recorded: context.views.recordMessage(opened, role, content),
        messages: opened.messages.length,
      };
    },
  },
  {
    method: 'POST',
    path: 'apps/:view/context',
    async json({ context, params, body }) {
      const opened = openView(context, params.view!);
      const { content, structuredContent } = await body();
      return { context: context.views.setContext(opened, content, structuredContent) };
    },
  },
  {
    method: 'POST',
    path: 'apps/:view/close',
    json: ({ context, params }) => ({ closed: context.views.close(openView(context, params.view!).id) }),
  },
];
