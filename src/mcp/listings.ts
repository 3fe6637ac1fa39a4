import {
  type Client,
  type McpSubscription,
  type Prompt,
  ProtocolError,
  type RequestOptions,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/load.js';
import { errorMessage } from '../errors.js';
import type { Attempt, Link } from './attempt.js';
import type { ConnectionChange } from './connection-options.js';
import type { ServerLog } from './server-log.js';
import { matchesAny } from './tool-filter.js';

export type ListKind = 'tools' | 'resources' | 'prompts';

/** A listing changed (after a list_changed and the re-listing it caused), or a watched resource did. */
export type ListingChanged = (
  change: ListKind | Extract<ConnectionChange, 'resource-updated'>,
  uri?: string,
) => void;

/**
 * What one server offers and how tack hears that it changed: the listings (tools filtered by enabledTools /
 * disabledTools), refreshed on list_changed (unsolicited on a 2025-era link, on a listen stream on
 * 2026-07-28), and the resources someone watches, which outlive a reconnect. The connection hands it each new
 * client with its attempt: what a client says once its attempt is over is ignored.
 */
export class ServerListings {
  tools: Tool[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  prompts: Prompt[] = [];

  readonly #config: ServerConfig;
  readonly #log: ServerLog;
  readonly #changed: ListingChanged;
  readonly #refreshing = new Map<ListKind, { again: boolean }>();
  /** Resource URIs someone asked to hear about, with how many asked; kept across reconnects. */
  readonly #watched = new Map<string, number>();
  #subscription: McpSubscription | undefined;

  constructor(config: ServerConfig, log: ServerLog, changed: ListingChanged) {
    this.#config = config;
    this.#log = log;
    this.#changed = changed;
  }

  /** Every kind the server declares, listed in parallel (at connect, within its start budget). */
  async load(client: Client, ro: RequestOptions): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    const kinds = (['tools', 'resources', 'prompts'] as const).filter((kind) => caps[kind] !== undefined);
    await Promise.all(
      kinds.map(async (kind) => {
        try {
          await this.#list(client, kind, ro);
        } catch (error) {
          // Tools are what a server is for: without them it is down. Prompts and resources are extras a client
          // can go without: the server stays up without them, and says why once.
          if (kind === 'tools' || ro.signal?.aborted) throw error;
          this.#log.diagnose(
            `listing ${kind} failed, so none are offered: ${errorMessage(error).split('\n')[0]}`,
          );
        }
      }),
    );
  }

  /** list_changed arrives unsolicited on a 2025-era connection and on a listen stream on 2026-07-28. */
  wire(client: Client, attempt: Attempt): void {
    const refresh = (kind: ListKind) => async () => {
      if (!attempt.over) await this.#refresh(client, kind);
    };
    client.setNotificationHandler('notifications/tools/list_changed', refresh('tools'));
    client.setNotificationHandler('notifications/resources/list_changed', refresh('resources'));
    client.setNotificationHandler('notifications/prompts/list_changed', refresh('prompts'));
    client.setNotificationHandler('notifications/resources/updated', async (notification) => {
      if (!attempt.over) this.#changed('resource-updated', notification.params.uri);
    });
  }

  /**
   * After a connect: open the listen stream (2026-07-28), or ask a 2025-era server again for the subscriptions
   * it forgot with its session.
   */
  connected(link: Link): void {
    this.#listen(link);
    if (link.client.getProtocolEra() === 'legacy')
      for (const uri of this.#watched.keys()) void this.#applyWatch(link, uri, true);
  }

  /** Closes the listen stream (the connection is going away). */
  async close(): Promise<void> {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    await subscription?.close();
  }

  /**
   * Ask the server to say when `uri` changes. Counted: the server is told once, and `unwatch` stops only when
   * every watcher has. A 2025-era server gets `resources/subscribe`; on 2026-07-28 the URI joins the listen
   * stream's filter. Kept across reconnects.
   */
  async watch(link: Link | undefined, uri: string): Promise<void> {
    const count = this.#watched.get(uri) ?? 0;
    this.#watched.set(uri, count + 1);
    if (count === 0 && link) await this.#applyWatch(link, uri, true);
  }

  async unwatch(link: Link | undefined, uri: string): Promise<void> {
    const count = this.#watched.get(uri) ?? 0;
    if (count <= 1) this.#watched.delete(uri);
    else this.#watched.set(uri, count - 1);
    if (count === 1 && link) await this.#applyWatch(link, uri, false);
  }

  async #applyWatch(link: Link, uri: string, on: boolean): Promise<void> {
    const { client } = link;
    if (!client.getServerCapabilities()?.resources?.subscribe) return;
    try {
      if (client.getProtocolEra() === 'modern') {
        // The listen filter is fixed per stream: open a new one with the new set, then close the old one.
        const old = this.#subscription;
        this.#listen(link);
        await old?.close();
      } else if (on) await client.subscribeResource({ uri });
      else await client.unsubscribeResource({ uri });
    } catch (error) {
      this.#log.note(`${on ? 'subscribing to' : 'unsubscribing from'} ${uri} failed: ${errorMessage(error)}`);
    }
  }

  /** Lists one kind (resources with their templates) and keeps the result; tools pass the config filters. */
  async #list(client: Client, kind: ListKind, ro: RequestOptions & { cacheMode?: 'refresh' }): Promise<void> {
    if (kind === 'tools') this.tools = this.#filterTools((await client.listTools(undefined, ro)).tools);
    if (kind === 'prompts') this.prompts = (await client.listPrompts(undefined, ro)).prompts;
    if (kind === 'resources') {
      const [resources, templates] = await Promise.all([
        client.listResources(undefined, ro),
        client.listResourceTemplates(undefined, ro).catch(ignoreMethodNotFound),
      ]);
      this.resources = resources.resources;
      this.resourceTemplates = templates?.resourceTemplates ?? [];
    }
  }

  #filterTools(tools: Tool[]): Tool[] {
    const { enabledTools, disabledTools } = this.#config;
    return tools.filter(
      (tool) =>
        (enabledTools === undefined || matchesAny(tool.name, enabledTools)) &&
        (disabledTools === undefined || !matchesAny(tool.name, disabledTools)),
    );
  }

  async #refresh(client: Client, kind: ListKind): Promise<void> {
    const running = this.#refreshing.get(kind);
    if (running) {
      running.again = true; // coalesce a burst of notifications into one more listing
      return;
    }
    const state = { again: true };
    this.#refreshing.set(kind, state);
    try {
      while (state.again) {
        state.again = false;
        await this.#list(client, kind, { timeout: this.#config.callTimeoutMs, cacheMode: 'refresh' });
        this.#log.note(`${kind} list changed; refreshed`);
        this.#changed(kind);
      }
    } catch (error) {
      this.#log.note(`refreshing ${kind} after list_changed failed: ${errorMessage(error)}`);
    } finally {
      this.#refreshing.delete(kind);
    }
  }

  /**
   * On a 2026-07-28 connection nothing arrives unsolicited: open the listen stream tack's catalog needs. When it
   * drops, listen again with backoff for as long as the connection lives, and re-list after each re-listen,
   * since changes made while no stream was open were never announced.
   */
  #listen(link: Link, tries = 0): void {
    const { client } = link;
    const live = () => !link.attempt.over;
    if (client.getProtocolEra() !== 'modern') return;
    const caps: ServerCapabilities = client.getServerCapabilities() ?? {};
    const kinds = (['tools', 'prompts', 'resources'] as const).filter(
      (kind) => caps[kind]?.listChanged === true,
    );
    const watched = caps.resources?.subscribe ? [...this.#watched.keys()] : [];
    if (kinds.length === 0 && watched.length === 0) return;
    const again = (next: number) => {
      const delay = Math.min(1000 * 2 ** (next - 1), 30_000);
      this.#log.note(`listen stream down; listening again in ${delay} ms`);
      setTimeout(() => live() && this.#listen(link, next), delay).unref();
    };
    client
      .listen({
        toolsListChanged: kinds.includes('tools'),
        promptsListChanged: kinds.includes('prompts'),
        resourcesListChanged: kinds.includes('resources'),
        ...(watched.length ? { resourceSubscriptions: watched } : {}),
      })
      .then(
        (subscription) => {
          if (!live()) return void subscription.close();
          this.#subscription = subscription;
          if (tries > 0) for (const kind of kinds) void this.#refresh(client, kind);
          void subscription.closed.then((reason) => {
            if (reason === 'remote' && live()) again(1);
          });
        },
        (error: unknown) => {
          this.#log.note(`subscriptions/listen failed: ${errorMessage(error)}`);
          if (live()) again(tries + 1);
        },
      );
  }
}

function ignoreMethodNotFound(error: unknown): undefined {
  if (error instanceof ProtocolError && error.code === -32601) return undefined;
  throw error;
}
