import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { parseJSONRPCMessage } from '@modelcontextprotocol/client';
import {
  AppBridge,
  type McpUiDisplayMode,
  type McpUiHostCapabilities,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps/app-bridge';
import { post } from './api';
import { callThroughGate } from './calls';
import type { CallToolResult } from './types';

/**
 * The host side of an MCP App view (SEP-1865, 2026-01-26), on the official SDK's `AppBridge`
 * (`@modelcontextprotocol/ext-apps/app-bridge`): it does the handshake (`ui/initialize`, version negotiation,
 * the view's capabilities), validates every request against the spec's schemas and answers each method through
 * the handlers below. What stays here is the console's own policy, which no library can know: tools only
 * through the console's gate and only the view's own server's app-visible ones (checked on the server), links
 * http(s) only and confirmed, messages recorded (there is no conversation), everything the host sends held until
 * the view says `ui/notifications/initialized` (the bridge sends at once), and the transport below.
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

/** A JSON-RPC error with its code: the bridge answers a handler's thrown error with the error's `code`. */
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

/**
 * postMessage to and from the sandbox proxy frame, pinned to the sandbox origin both ways. The SDK's
 * `PostMessageTransport` posts with target origin `*` and checks only the source window, which stays the same
 * object if the frame is ever navigated elsewhere: the view's HTML and tool results would follow it.
 */
class ProxyTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #frame: HTMLIFrameElement;
  readonly #origin: string;

  constructor(frame: HTMLIFrameElement, origin: string) {
    this.#frame = frame;
    this.#origin = origin;
  }

  readonly #listener = (event: MessageEvent): void => {
    if (event.source !== this.#frame.contentWindow || event.origin !== this.#origin) return;
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(event.data);
    } catch {
      return; // not JSON-RPC: nothing the host answers
    }
    this.onmessage?.(message);
  };

  async start(): Promise<void> {
    addEventListener('message', this.#listener);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.#frame.contentWindow?.postMessage(message, this.#origin);
  }

  async close(): Promise<void> {
    removeEventListener('message', this.#listener);
    this.onclose?.();
  }
}

export class ViewHost {
  readonly #bridge: AppBridge;
  readonly #transport: ProxyTransport;
  readonly #view: OpenedView;
  readonly #ui: ViewUi;
  readonly #api: string;
  #proxyReady = false;
  #initialized = false;
  #closed = false;
  /** Host-to-view sends held until the view says `ui/notifications/initialized`, as the spec requires. */
  readonly #held: Array<() => void> = [];
  #context: McpUiHostContext;

  constructor(frame: HTMLIFrameElement, view: OpenedView, ui: ViewUi, args: Record<string, unknown>) {
    this.#view = view;
    this.#ui = ui;
    this.#api = `/apps/${encodeURIComponent(view.viewId)}`;
    this.#transport = new ProxyTransport(frame, view.sandboxOrigin);
    this.#context = {
      toolInfo: { tool: view.tool as NonNullable<McpUiHostContext['toolInfo']>['tool'] },
      theme: theme(),
      displayMode: 'inline',
      availableDisplayModes: HOST_MODES,
      containerDimensions: { maxHeight: 2000 },
      platform: 'web',
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: 'tack console',
    };
    const capabilities: McpUiHostCapabilities = {
      openLinks: {},
      serverTools: {},
      serverResources: {},
      logging: {},
      updateModelContext: { text: {}, structuredContent: {} },
      message: { text: {} },
      sandbox: { permissions: {}, csp: view.csp },
    };
    this.#bridge = new AppBridge(null, { name: 'tack console', version: '1' }, capabilities, {
      hostContext: this.#context,
    });
    this.#handle();
    this.#whenInitialized(() => void this.#bridge.sendToolInput({ arguments: args }));
  }

  /** Starts listening to the proxy frame: call before the frame loads, so its ready notice cannot be missed. */
  connect(): Promise<void> {
    return this.#bridge.connect(this.#transport);
  }

  get mode(): DisplayMode {
    return this.#context.displayMode === 'fullscreen' ? 'fullscreen' : 'inline';
  }

  toolResult(result: CallToolResult): void {
    this.#whenInitialized(
      () => void this.#bridge.sendToolResult(result as Parameters<AppBridge['sendToolResult']>[0]),
    );
  }

  toolCancelled(reason: string): void {
    this.#whenInitialized(() => void this.#bridge.sendToolCancelled({ reason }));
  }

  /** A change of the host context; the bridge sends the view only the fields that changed. */
  hostContextChanged(change: Partial<McpUiHostContext>): void {
    const context = { ...this.#context, ...change };
    this.#context = context;
    this.#whenInitialized(() => this.#bridge.setHostContext(context));
  }

  /** The person's own switch (the view asks with `ui/request-display-mode`). */
  setMode(mode: DisplayMode): void {
    if (mode === this.mode) return;
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
      answered = await this.#bridge.teardownResource({ reason }, { timeout: TEARDOWN_WAIT_MS }).then(
        () => true,
        () => false,
      );
    }
    this.#closed = true;
    await this.#bridge.close().catch(() => {});
    await post(`${this.#api}/close`, {}).catch(() => {});
    return answered;
  }

  #whenInitialized(send: () => void): void {
    if (this.#closed) return;
    if (this.#initialized) send();
    else this.#held.push(send);
  }

  #handle(): void {
    const bridge = this.#bridge;
    const ui = this.#ui;
    bridge.addEventListener('sandboxready', () => {
      if (this.#proxyReady) return;
      this.#proxyReady = true;
      void bridge.sendSandboxResourceReady({ html: this.#view.html, csp: this.#view.csp, permissions: {} });
    });
    bridge.addEventListener('initialized', () => {
      if (this.#initialized) return;
      this.#initialized = true;
      for (const send of this.#held.splice(0)) send();
    });
    bridge.addEventListener('sizechange', ({ height, width }) => {
      const number = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
      ui.size(number(height), number(width));
    });
    bridge.addEventListener('loggingmessage', ({ level, data }) =>
      ui.log(`${String(level ?? 'info')}: ${JSON.stringify(data ?? '')}`),
    );
    bridge.oncalltool = async (params) => {
      const outcome = await viaConsole(
        callThroughGate(`${this.#api}/call`, { name: params.name, arguments: params.arguments ?? {} }),
      );
      if (outcome.status === 'done')
        return outcome.result as Awaited<ReturnType<NonNullable<AppBridge['oncalltool']>>>;
      throw new RpcError(-32_000, `refused: ${outcome.reason}`);
    };
    bridge.onreadresource = (params) => viaConsole(post(`${this.#api}/read`, { uri: params.uri }));
    // A refusal by the person is an answer, `isError: true` (the SDK's views read it so); a URL the console
    // never opens is an invalid request, a JSON-RPC error.
    bridge.onopenlink = async (params) => {
      const url = linkOf(params.url);
      if (!(await ui.confirmLink(url))) return { isError: true };
      open(url, '_blank', 'noopener,noreferrer');
      return {};
    };
    bridge.onmessage = async (params) => {
      if (params.content.length === 0)
        throw new RpcError(-32_602, 'ui/message content must be a non-empty array of content blocks');
      const text = blocksText(params.content);
      if (!(await ui.confirmMessage(text))) return { isError: true };
      await viaConsole(post(`${this.#api}/message`, { role: params.role, content: params.content }));
      ui.recorded(text);
      // The person let it through, but there is no conversation to add it to: not delivered, so isError.
      return { isError: true };
    };
    bridge.onupdatemodelcontext = async (params) => {
      const answer = await viaConsole(
        post<{ context: unknown }>(`${this.#api}/context`, {
          content: params.content,
          structuredContent: params.structuredContent,
        }),
      );
      ui.context(answer.context);
      return {};
    };
    bridge.onrequestdisplaymode = async ({ mode }) => {
      const declared = bridge.getAppCapabilities()?.availableDisplayModes;
      const allowed = isHostMode(mode) && (declared === undefined || declared.includes(mode));
      if (allowed) this.setMode(mode);
      return { mode: this.mode };
    };
    bridge.fallbackRequestHandler = async (request) => {
      throw new RpcError(-32_601, `${request.method} is not supported by the tack console`);
    };
  }
}

/**
 * The console's refusals (no such tool for this view, not app-visible, closed view) reach the view as -32000,
 * the spec's implementation-defined error, with the console's words; the bridge would make them -32603.
 */
function viaConsole<T>(answer: Promise<T>): Promise<T> {
  return answer.catch((error: Error) => {
    throw new RpcError(-32_000, error.message);
  });
}

function isHostMode(mode: McpUiDisplayMode): mode is DisplayMode {
  return (HOST_MODES as string[]).includes(mode);
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
