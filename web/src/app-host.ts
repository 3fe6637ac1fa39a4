import { post } from './api';
import { callThroughGate } from './calls';
import type { CallToolResult } from './types';

/**
 * The host side of an MCP App view (SEP-1865, 2026-01-26): JSON-RPC over postMessage with the view, through the
 * sandbox proxy the console serves on its own origin. Written against the spec text (the `@modelcontextprotocol/
 * ext-apps` package, whose AppBridge does the same, is not a dependency of tack).
 */

export interface OpenedView {
  viewId: string;
  /** The sandbox proxy page, on the sandbox origin. */
  proxy: string;
  sandboxOrigin: string;
  html: string;
  /** The resource's declared origins the console kept (the policy the proxy page carries). */
  csp: Record<string, string[]>;
  uri: string;
  server: string;
  prefersBorder?: boolean;
  protocolVersion: string;
  tool: unknown;
}

export type DisplayMode = 'inline' | 'fullscreen';

/** What the host asks of the page: the person's answers and what to show. */
export interface ViewUi {
  confirmLink(url: string): Promise<boolean>;
  confirmMessage(text: string): Promise<boolean>;
  size(height: number | undefined, width: number | undefined): void;
  log(line: string): void;
  context(context: unknown): void;
  recorded(text: string): void;
  displayMode(mode: DisplayMode): void;
}

type Id = string | number;
interface Rpc {
  jsonrpc: '2.0';
  id?: Id;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string };
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** How long `ui/resource-teardown` waits for the view's answer before the frame goes anyway. */
export const TEARDOWN_WAIT_MS = 3000;

const HOST_MODES: DisplayMode[] = ['inline', 'fullscreen'];

/** A content block list as a person reads it: text as is, anything else named by its type. */
export function blocksText(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((block: { type?: unknown; text?: unknown }) =>
      block?.type === 'text' && typeof block.text === 'string' ? block.text : `[${String(block?.type)}]`,
    )
    .join('\n');
}

export function theme(): 'light' | 'dark' {
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export class ViewHost {
  readonly #frame: HTMLIFrameElement;
  readonly #view: OpenedView;
  readonly #ui: ViewUi;
  readonly #api: string;
  #proxyReady = false;
  #initialized = false;
  #closed = false;
  /** Host-to-view messages held until the view says `ui/notifications/initialized`, as the spec requires. */
  readonly #held: Rpc[] = [];
  readonly #waiting = new Map<Id, (message: Rpc) => void>();
  #nextId = 1;
  #mode: DisplayMode = 'inline';
  /** The modes the view declared in `appCapabilities.availableDisplayModes` (undefined: it declared none). */
  #viewModes: string[] | undefined;

  constructor(frame: HTMLIFrameElement, view: OpenedView, ui: ViewUi, args: Record<string, unknown>) {
    this.#frame = frame;
    this.#view = view;
    this.#ui = ui;
    this.#api = `/apps/${encodeURIComponent(view.viewId)}`;
    this.#notify('ui/notifications/tool-input', { arguments: args });
  }

  get mode(): DisplayMode {
    return this.#mode;
  }

  toolResult(result: CallToolResult): void {
    this.#notify('ui/notifications/tool-result', result as unknown as Record<string, unknown>);
  }

  toolCancelled(reason: string): void {
    this.#notify('ui/notifications/tool-cancelled', { reason });
  }

  hostContextChanged(context: Record<string, unknown>): void {
    this.#notify('ui/notifications/host-context-changed', context);
  }

  /** The person's own switch (the view asks with `ui/request-display-mode`). */
  setMode(mode: DisplayMode): void {
    if (mode === this.#mode) return;
    this.#mode = mode;
    this.#ui.displayMode(mode);
    this.hostContextChanged({ displayMode: mode });
  }

  /**
   * `ui/resource-teardown`, waiting for the view's answer (at most TEARDOWN_WAIT_MS), then the view is closed on
   * the server: its proxy page and API stop answering. Resolves with whether the view answered.
   */
  async teardown(reason: string): Promise<boolean> {
    if (this.#closed) return false;
    let answered = false;
    if (this.#initialized) {
      const id = `teardown-${this.#nextId++}`;
      answered = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          this.#waiting.delete(id);
          resolve(false);
        }, TEARDOWN_WAIT_MS);
        this.#waiting.set(id, () => {
          clearTimeout(timer);
          resolve(true);
        });
        this.#send({ jsonrpc: '2.0', id, method: 'ui/resource-teardown', params: { reason } });
      });
    }
    this.#closed = true;
    await post(`${this.#api}/close`, {}).catch(() => {});
    return answered;
  }

  /** Every message event of the page: only the proxy's window, at the sandbox origin, is listened to. */
  readonly onMessage = (event: MessageEvent): void => {
    if (this.#closed || event.source !== this.#frame.contentWindow) return;
    if (event.origin !== this.#view.sandboxOrigin) return;
    const message = event.data as Rpc;
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return;
    if (message.method === undefined) {
      // An answer to one of the host's requests (teardown).
      if (message.id !== undefined) this.#waiting.get(message.id)?.(message);
      this.#waiting.delete(message.id ?? '');
      return;
    }
    if (typeof message.method !== 'string') return;
    if (message.params !== undefined && (typeof message.params !== 'object' || message.params === null)) {
      if (message.id !== undefined) this.#fail(message.id, new RpcError(-32_602, 'params must be an object'));
      return;
    }
    if (message.method === 'ui/notifications/sandbox-proxy-ready') {
      if (this.#proxyReady) return;
      this.#proxyReady = true;
      this.#send({
        jsonrpc: '2.0',
        method: 'ui/notifications/sandbox-resource-ready',
        params: { html: this.#view.html, csp: this.#view.csp, permissions: {} },
      });
      return;
    }
    const id = message.id;
    if (id !== undefined && typeof id !== 'string' && typeof id !== 'number') return;
    const params = message.params ?? {};
    if (id === undefined) {
      this.#notification(message.method, params);
      return;
    }
    this.#request(message.method, params).then(
      (result) => this.#send({ jsonrpc: '2.0', id, result }),
      (error: Error) => this.#fail(id, error),
    );
  };

  #notification(method: string, params: Record<string, unknown>): void {
    switch (method) {
      case 'ui/notifications/initialized':
        if (this.#initialized) return;
        this.#initialized = true;
        for (const message of this.#held.splice(0)) this.#send(message);
        return;
      case 'ui/notifications/size-changed': {
        const number = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
        this.#ui.size(number(params.height), number(params.width));
        return;
      }
      case 'notifications/message':
        this.#ui.log(`${String(params.level ?? 'info')}: ${JSON.stringify(params.data ?? '')}`);
        return;
    }
  }

  async #request(method: string, params: Record<string, unknown>): Promise<unknown> {
    switch (method) {
      case 'ui/initialize': {
        const capabilities = params.appCapabilities as { availableDisplayModes?: unknown } | undefined;
        const modes = capabilities?.availableDisplayModes;
        this.#viewModes = Array.isArray(modes) ? modes.filter((m) => typeof m === 'string') : undefined;
        return {
          protocolVersion: this.#view.protocolVersion,
          hostInfo: { name: 'tack console', version: '1' },
          hostCapabilities: {
            openLinks: {},
            serverTools: {},
            serverResources: {},
            logging: {},
            updateModelContext: { text: {}, structuredContent: {} },
            message: { text: {} },
            sandbox: { permissions: {}, csp: this.#view.csp },
          },
          hostContext: {
            toolInfo: { tool: this.#view.tool },
            theme: theme(),
            displayMode: this.#mode,
            availableDisplayModes: HOST_MODES,
            containerDimensions: { maxHeight: 2000 },
            platform: 'web',
            locale: navigator.language,
            timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
            userAgent: 'tack console',
          },
        };
      }
      case 'ping':
        return {};
      case 'tools/call': {
        if (typeof params.name !== 'string') throw new RpcError(-32_602, 'tools/call needs a tool name');
        const outcome = await callThroughGate(`${this.#api}/call`, {
          name: params.name,
          arguments: params.arguments ?? {},
        });
        if (outcome.status === 'done') return outcome.result;
        throw new RpcError(-32_000, `refused: ${outcome.reason}`);
      }
      case 'resources/read':
        if (typeof params.uri !== 'string') throw new RpcError(-32_602, 'resources/read needs a uri');
        return post(`${this.#api}/read`, { uri: params.uri });
      case 'ui/open-link': {
        const url = linkOf(params.url);
        if (!(await this.#ui.confirmLink(url))) throw new RpcError(-32_000, 'Link opening denied by user');
        open(url, '_blank', 'noopener,noreferrer');
        return {};
      }
      case 'ui/message': {
        if (params.role !== 'user') throw new RpcError(-32_602, 'ui/message role must be "user"');
        if (!Array.isArray(params.content) || params.content.length === 0)
          throw new RpcError(-32_602, 'ui/message content must be a non-empty array of content blocks');
        const text = blocksText(params.content);
        if (!(await this.#ui.confirmMessage(text)))
          throw new RpcError(-32_000, 'Message sending denied by user');
        await post(`${this.#api}/message`, { role: params.role, content: params.content });
        this.#ui.recorded(text);
        // The person let it through, but there is no conversation to add it to: the view is told so.
        throw new RpcError(
          -32_000,
          'Message not sent: the tack console runs no model conversation; it was recorded in the console',
        );
      }
      case 'ui/update-model-context': {
        const answer = await post<{ context: unknown }>(`${this.#api}/context`, {
          content: params.content,
          structuredContent: params.structuredContent,
        });
        this.#ui.context(answer.context);
        return {};
      }
      case 'ui/request-display-mode': {
        const mode = params.mode;
        const allowed =
          (mode === 'inline' || mode === 'fullscreen') &&
          (this.#viewModes === undefined || this.#viewModes.includes(mode));
        if (allowed) this.setMode(mode);
        return { mode: this.#mode };
      }
      default:
        throw new RpcError(-32_601, `${method} is not supported by the tack console`);
    }
  }

  #notify(method: string, params: Record<string, unknown>): void {
    const message: Rpc = { jsonrpc: '2.0', method, params };
    if (this.#initialized) this.#send(message);
    else this.#held.push(message);
  }

  #send(message: Rpc): void {
    if (this.#closed) return;
    this.#frame.contentWindow?.postMessage(message, this.#view.sandboxOrigin);
  }

  #fail(id: Id, error: Error): void {
    const code = error instanceof RpcError ? error.code : -32_000;
    this.#send({ jsonrpc: '2.0', id, error: { code, message: error.message } });
  }
}

/** Only an absolute http(s) URL opens; anything else (javascript:, data:, file:, relative) is refused. */
export function linkOf(value: unknown): string {
  if (typeof value !== 'string') throw new RpcError(-32_602, 'Invalid URL: ui/open-link needs a url string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RpcError(-32_602, 'Invalid URL: not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RpcError(-32_602, `Invalid URL: only http and https links open, not ${url.protocol}`);
  return url.href;
}
