import type { McpServer, Server, ServerNotifier } from '@modelcontextprotocol/server';

/** What every served instance gets from its factory: the protocol era of the connection or request. */
export type ServerFactory = (context: { era: 'modern' | 'legacy' }) => McpServer | Server;

/**
 * Change notifications for whatever tack serves (the SDK's `ServerNotifier`, which `createMcpHandler` returns).
 * One call reaches every client that can hear it: connected instances (stdio, 2025-era HTTP sessions) send it
 * themselves, unsolicited on a 2025-era link and on the listen stream on 2026-07-28; 2026-07-28 HTTP clients
 * get it on their `subscriptions/listen` streams.
 */
export type Notifier = ServerNotifier;

const subscriptions = new WeakMap<Server, { era: 'modern' | 'legacy'; uris: Set<string> }>();

/**
 * Answers `resources/subscribe` on a 2025-era connection and remembers the URIs, so `resourceUpdated` reaches
 * only the connections that asked (unsolicited per-resource updates are wrong on that era). On 2026-07-28 the
 * URIs live in the client's listen filter and the SDK filters delivery itself. The server must declare
 * `resources: { subscribe: true }`. `onChange` hears every subscribe and unsubscribe (the gateway forwards
 * them upstream).
 */
export function trackSubscriptions(
  server: Server,
  era: 'modern' | 'legacy',
  onChange?: (uri: string, subscribed: boolean) => void,
): void {
  const state = { era, uris: new Set<string>() };
  subscriptions.set(server, state);
  if (era === 'modern') return;
  server.setRequestHandler('resources/subscribe', async (request) => {
    state.uris.add(request.params.uri);
    onChange?.(request.params.uri, true);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    state.uris.delete(request.params.uri);
    onChange?.(request.params.uri, false);
    return {};
  });
}

function wantsUpdate(server: Server, uri: string): boolean {
  const state = subscriptions.get(server);
  return state !== undefined && (state.era === 'modern' || state.uris.has(uri));
}

/**
 * The instances alive on connections (stdio) or sessions (2025-era HTTP), to notify them; each notification
 * goes first to `forward` when given (the 2026-07-28 HTTP handler's notifier).
 */
export class LiveInstances implements Notifier {
  readonly #instances = new Set<Server>();
  readonly #forward: Notifier | undefined;

  constructor(forward?: Notifier) {
    this.#forward = forward;
  }

  add(instance: McpServer | Server): Server {
    const low = 'server' in instance ? instance.server : instance;
    this.#instances.add(low);
    return low;
  }

  delete(instance: Server): void {
    this.#instances.delete(instance);
  }

  toolsChanged(): void {
    this.#forward?.toolsChanged();
    this.#each((s) => s.sendToolListChanged());
  }

  promptsChanged(): void {
    this.#forward?.promptsChanged();
    this.#each((s) => s.sendPromptListChanged());
  }

  resourcesChanged(): void {
    this.#forward?.resourcesChanged();
    this.#each((s) => s.sendResourceListChanged());
  }

  resourceUpdated(uri: string): void {
    this.#forward?.resourceUpdated(uri);
    this.#each((s) => (wantsUpdate(s, uri) ? s.sendResourceUpdated({ uri }) : Promise.resolve()));
  }

  #each(fn: (server: Server) => Promise<void>): void {
    // A notification an instance cannot send (no capability, link closing) is not worth dying for.
    for (const instance of this.#instances) fn(instance).catch(() => {});
  }
}
