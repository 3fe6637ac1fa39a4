import type { IncomingMessage } from 'node:http';
import { projectSkillsTrusted } from '../config/apply-trust.js';
import type { TackConfig } from '../config/load.js';
import { KnowledgeBase } from '../knowledge/knowledge.js';
import { type ComputationRuntimes, openRuntimes } from '../knowledge/runtimes.js';
import type { McpHost } from '../mcp/host.js';
import type { SkillLibrary } from '../skills/library.js';
import { loadSkills } from '../skills/load.js';
import { AppViews } from './apps.js';
import { ConsoleCalls } from './calls.js';
import { type CatalogView, catalogView } from './catalog.js';
import type { SandboxServer } from './sandbox.js';

/**
 * What every API route shares (routes.ts): the host and configuration, the calls in flight, the open MCP App
 * views, and what is loaded once and kept (the catalog's view until the catalog changes, the skills library,
 * the knowledge bundles, the computation runtimes).
 */
export class ConsoleContext {
  readonly host: McpHost;
  readonly config: TackConfig;
  readonly calls: ConsoleCalls;
  readonly views: AppViews;
  /** Set once the sandbox proxy listens (startConsole). */
  sandbox: SandboxServer | undefined;
  readonly #connecting: Promise<void>;
  #view: { catalog: unknown; value: Promise<CatalogView> } | undefined;
  #skills: Promise<SkillLibrary> | undefined;
  #knowledge: Promise<KnowledgeBase | undefined> | undefined;
  #runtimes: Promise<ComputationRuntimes> | undefined;
  #origins: ReadonlySet<string> = new Set();
  #origin = '';

  /** `connecting`: the servers' start, which the skills library waits for (servers offer skills too). */
  constructor(host: McpHost, config: TackConfig, connecting: Promise<void>) {
    this.host = host;
    this.config = config;
    this.#connecting = connecting;
    this.calls = new ConsoleCalls(host, config);
    this.views = new AppViews(host);
  }

  /** The console's origins once it listens on `port`: 127.0.0.1, localhost and [::1] on that port. */
  listening(port: number): string {
    this.#origin = `http://127.0.0.1:${port}`;
    this.#origins = new Set([this.#origin, `http://localhost:${port}`, `http://[::1]:${port}`]);
    return this.#origin;
  }

  /** Whether an Origin header names this console (a page on another local port is another site). */
  isOwnOrigin(origin: string): boolean {
    return this.#origins.has(origin);
  }

  /** The origin the page was loaded from, for a view's frame-ancestors; the console's own when it is none. */
  pageOrigin(req: IncomingMessage): string {
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    return this.#origins.has(origin) ? origin : this.#origin;
  }

  /** The catalog's view, computed once per catalog (a failed one is computed again next time). */
  catalogView(): Promise<CatalogView> {
    if (this.#view?.catalog !== this.host.catalog) {
      const value = catalogView(this.host, this.config);
      const view = { catalog: this.host.catalog, value };
      this.#view = view;
      value.catch(() => {
        if (this.#view === view) this.#view = undefined;
      });
    }
    return this.#view.value;
  }

  /** After pins change: the next view reviews the catalog again. */
  forgetCatalogView(): void {
    this.#view = undefined;
  }

  skills(): Promise<SkillLibrary> {
    this.#skills ??= this.#connecting.then(() =>
      loadSkills({ config: this.config, trustProject: projectSkillsTrusted(this.config), host: this.host }),
    );
    return this.#skills;
  }

  knowledge(): Promise<KnowledgeBase | undefined> {
    this.#knowledge ??=
      this.config.knowledge.bundles.length > 0
        ? KnowledgeBase.load(this.config.knowledge.bundles)
        : Promise.resolve(undefined);
    return this.#knowledge;
  }

  runtimes(): Promise<ComputationRuntimes> {
    this.#runtimes ??= openRuntimes(this.config.knowledge.runtimes);
    return this.#runtimes;
  }

  /** Closes what the console opened for its routes (the computation runtimes, if any ran). */
  async close(): Promise<void> {
    if (this.#runtimes) await (await this.#runtimes).close().catch(() => {});
  }
}
