import { randomBytes } from 'node:crypto';
import type { ReadResourceResult } from '@modelcontextprotocol/client';
import { TackError } from '../errors.js';
import type { McpHost } from '../mcp/host.js';
import { appResourceOf, visibilityOf } from './catalog.js';

/** The MCP Apps extension (SEP-1865, stable 2026-01-26): what the console implements of it. */
export const MCP_APP_MIME = 'text/html;profile=mcp-app';
export const MCP_APPS_PROTOCOL = '2026-01-26';
/** A view's HTML is someone else's document; past this it is refused rather than framed. */
export const MAX_VIEW_BYTES = 2 * 1024 * 1024;
const VIEW_TTL_MS = 60 * 60_000;
const MAX_VIEWS = 100;

export interface AppCsp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
  baseUriDomains?: string[];
}

export interface AppView {
  id: string;
  /** The tool whose definition links the view (model-visible name) and its server. */
  tool: string;
  server: string;
  uri: string;
  html: string;
  csp: string;
  prefersBorder: boolean | undefined;
  created: number;
}

/**
 * A CSP source the resource declares: an origin with an optional `*.` subdomain wildcard and port, nothing that
 * could end the directive (`;`, `,`, spaces, quotes) or widen it (`*` alone, schemes only, 'unsafe-...').
 */
const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$/;

function sources(list: unknown): string[] {
  return Array.isArray(list) ? list.filter((s): s is string => typeof s === 'string' && ORIGIN.test(s)) : [];
}

/**
 * The view's Content-Security-Policy: the spec's restrictive default, widened only by the origins the resource
 * declares in `_meta.ui.csp` (well-formed ones; the rest are dropped), never loosened beyond that. `sandbox
 * allow-scripts` keeps the document in an opaque origin even when opened outside the console's frame, so it
 * never shares the console's origin, and `frame-ancestors` lets only the console frame it.
 */
export function viewCsp(declared: AppCsp | undefined, consoleOrigin: string): string {
  const resource = sources(declared?.resourceDomains).join(' ');
  const connect = sources(declared?.connectDomains);
  const frames = sources(declared?.frameDomains);
  const base = sources(declared?.baseUriDomains);
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
    'sandbox allow-scripts',
  ].join('; ');
}

/** Views the console has framed, by an unguessable id: the id in `/view/<id>` is the only key to the HTML. */
export class AppViews {
  readonly #views = new Map<string, AppView>();
  readonly #host: McpHost;

  constructor(host: McpHost) {
    this.#host = host;
  }

  /** Reads the `ui://` resource the tool links (`resources/read` on the tool's own server) and registers a view. */
  async open(toolName: string, consoleOrigin: string): Promise<AppView> {
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
      csp: viewCsp(ui?.csp, consoleOrigin),
      prefersBorder: typeof ui?.prefersBorder === 'boolean' ? ui.prefersBorder : undefined,
      created: Date.now(),
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

  #prune(): void {
    const now = Date.now();
    for (const [id, view] of this.#views) if (now - view.created >= VIEW_TTL_MS) this.#views.delete(id);
    while (this.#views.size >= MAX_VIEWS) this.#views.delete(this.#views.keys().next().value!);
  }
}
