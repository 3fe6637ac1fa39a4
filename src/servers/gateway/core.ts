import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import type { Server } from '@modelcontextprotocol/server';
import { errorMessage } from '../../errors.js';
import type { Catalog } from '../../mcp/catalog.js';
import { hostDefinitions } from '../../mcp/definitions.js';
import type { McpHost } from '../../mcp/host.js';
import type { SemanticRanker } from '../../search/semantic.js';
import type { ToolTermCache } from '../../search/term-cache.js';
import type { SearchableTool, ToolSearchIndex } from '../../search/tool-index.js';
import { HeldOnce, HeldView, heldNotice } from '../../security/held.js';
import type { DefinitionGuard } from '../../security/pins.js';
import { RuleSet } from '../../security/rules.js';
import type { AuditEntry, AuditSink } from '../../store/audit.js';
import { printable } from '../../util/printable.js';
import { sendWarning, type WarningSink } from '../../util/warnings.js';
import { within } from '../../util/within.js';
import type { Exchanges } from './exchange.js';
import { GatewayNames } from './names.js';
import type { GatewaySkills } from './skills.js';

/** Past this many upstream tools, `toolSearch: 'auto'` serves the two meta-tools instead of the list. */
const AUTO_SEARCH_TOOLS = 40;
/**
 * How long a request waits for the store to say whether a held definition was accepted meanwhile. A database that
 * does not answer would otherwise hold every request for its statement timeout while anything is held; past this
 * the definition stays held for that request (the safe answer) and the next one asks again.
 */
export const RELEASE_CHECK_MS = 2_000;
/** After a release check failed or outlived RELEASE_CHECK_MS, held definitions stay held this long without asking. */
const RELEASE_CHECK_BACKOFF_MS = 5_000;
/** AUDIT_FAILED is said at most once in this long; the rows not said are counted in the next one. */
const AUDIT_WARNING_INTERVAL_MS = 10_000;

const INSTRUCTIONS_CAP = 400;

function capText(text: string): string {
  return text.length > INSTRUCTIONS_CAP ? `${text.slice(0, INSTRUCTIONS_CAP - 3)}...` : text;
}

/**
 * What the gateway serves for one catalog, each part computed on first use: the host rebuilds its catalog on
 * every status or list change, so this is one computation per change, not one per request or instance.
 */
export interface CatalogView {
  readonly catalog: Catalog;
  readonly names: GatewayNames;
  /** Upstream definitions held back in this catalog (not served). */
  readonly held: HeldView;
  /** Whether this catalog is served as search_tools + call_tool. */
  readonly searching: boolean;
  instructions?: string;
  tools?: Tool[];
  resources?: Resource[];
  resourceTemplates?: ResourceTemplate[];
  prompts?: Prompt[];
  search?: { index: ToolSearchIndex; tools: SearchableTool[] };
  /** run_code and code_api, described for this catalog (handlers/code-mode.ts). */
  codeTools?: Tool[];
}

/** One downstream connection (stdio, a 2025-era HTTP session) or request (2026-07-28 HTTP). */
export interface Downstream {
  server: Server | undefined;
  era: 'modern' | 'legacy';
  /** The level a 2025-era client set with logging/setLevel for its session. */
  logLevel: string | undefined;
  /** What a 2025-era client declared in `initialize` (a 2026-07-28 client declares per request). */
  clientCapabilities(): Record<string, unknown> | undefined;
  clientInfo(): { name?: string; version?: string } | undefined;
}

export interface GatewayCoreOptions {
  host: McpHost;
  audit: AuditSink | undefined;
  transport: 'stdio' | 'http';
  namespaced: boolean;
  exchanges: Exchanges;
  answerTimeoutMs: number | undefined;
  skills: GatewaySkills | undefined;
  toolSearch: 'auto' | 'on' | 'off';
  /**
   * tack.json `permissions.deny`: calls they match (by `mcp__<server>__<tool>` and arguments) are refused and
   * audited as `denied`. (`ask` and `allow` are the agent's: the gateway has no one to ask.)
   */
  deny?: readonly string[] | undefined;
  /** Serve run_code and code_api (handlers/code-mode.ts). */
  codeMode?: boolean | undefined;
  semantic: SemanticRanker | undefined;
  /** Tokens of the catalog kept between runs (search/term-cache.ts), for search_tools over a large catalog. */
  toolTerms?: ToolTermCache | undefined;
  guard: DefinitionGuard | undefined;
  onWarning: WarningSink | undefined;
  /** Where the configuration came from, said in the instructions when it names no server. */
  configuredFrom?: string | undefined;
}

/**
 * The gateway's state and what every request handler (handlers/) shares: the host, the view of the current
 * catalog, the exchanges in flight, the audit log.
 */
export class GatewayCore {
  readonly host: McpHost;
  readonly transport: 'stdio' | 'http';
  readonly namespaced: boolean;
  readonly exchanges: Exchanges;
  readonly answerTimeoutMs: number | undefined;
  readonly skills: GatewaySkills | undefined;
  readonly semantic: SemanticRanker | undefined;
  readonly toolTerms: ToolTermCache | undefined;
  readonly codeMode: boolean;
  readonly #audit: AuditSink | undefined;
  readonly #toolSearch: 'auto' | 'on' | 'off';
  readonly #guard: DefinitionGuard | undefined;
  readonly #deny: RuleSet | undefined;
  /** Built once per catalog (the guard's review is a store round trip); the latest, for the synchronous readers. */
  readonly #views = new WeakMap<Catalog, Promise<CatalogView>>();
  #latest: CatalogView | undefined;
  /** Held definitions already reported (each catalog rebuild reviews again). */
  readonly #reported = new HeldOnce();
  /** When AUDIT_FAILED was last said, and how many failed rows were not said since. */
  #auditWarnedAt = Number.NEGATIVE_INFINITY;
  #auditUnsaid = 0;
  /** When a release check last failed or outlived RELEASE_CHECK_MS: the store is not asked again for a while. */
  #releaseCheckFailedAt = Number.NEGATIVE_INFINITY;
  readonly #onWarning: WarningSink | undefined;
  readonly #configuredFrom: string | undefined;
  /** Other problems already reported (a term cache that cannot be written), once each. */
  readonly #problems = new Set<string>();

  constructor(options: GatewayCoreOptions) {
    this.host = options.host;
    this.transport = options.transport;
    this.namespaced = options.namespaced;
    this.exchanges = options.exchanges;
    this.answerTimeoutMs = options.answerTimeoutMs;
    this.skills = options.skills;
    this.semantic = options.semantic;
    this.toolTerms = options.toolTerms;
    this.codeMode = options.codeMode ?? false;
    this.#audit = options.audit;
    this.#toolSearch = options.toolSearch;
    this.#guard = options.guard;
    this.#deny = options.deny?.length ? new RuleSet({ deny: options.deny }) : undefined;
    this.#onWarning = options.onWarning;
    this.#configuredFrom = options.configuredFrom;
  }

  /** Reports a problem of the gateway's own (not of a request) as a warning, once per distinct message. */
  warnOnce(code: 'INDEX_CACHE', message: string): void {
    if (this.#problems.has(message)) return;
    this.#problems.add(message);
    sendWarning(this.#onWarning, { code, message });
  }

  /**
   * The view of the host's current catalog, reviewed by the guard first: nothing of a new catalog is served before
   * its definitions are checked against the pins (a store that cannot be read fails the request, not open).
   */
  async view(): Promise<CatalogView> {
    const catalog = this.host.catalog;
    const pending = this.#views.get(catalog);
    if (pending) {
      const view = await pending;
      // A held definition accepted with `tack pins accept` (or through another instance sharing the store) is
      // served from the next request: one store read per server with held definitions, only while any is held.
      if (view.held.size === 0 || !(await this.#releasedSafely(view))) return view;
      if (this.#views.get(catalog) !== pending) return this.view();
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

  /**
   * The reviewed view of the current catalog if there is one already, without waiting (the fast path, the
   * Mcp-Param check, instructions): undefined when the catalog changed since and its review has not finished,
   * which it then starts, so the next request finds it (stdio has no hook that awaits it before a request).
   */
  current(): CatalogView | undefined {
    if (this.#latest?.catalog === this.host.catalog) return this.#latest;
    this.view().catch(() => {});
    return undefined;
  }

  /** The names of the current catalog: reviewed if the review is done, else without held definitions marked. */
  names(): GatewayNames {
    return this.current()?.names ?? new GatewayNames(this.host.catalog, this.namespaced, () => false);
  }

  /** Whether something held was released; a store that cannot say (within RELEASE_CHECK_MS) keeps it held. */
  async #releasedSafely(view: CatalogView): Promise<boolean> {
    // A store that just failed to answer is not asked again at once: a request makes up to three checks (its
    // review, the fast path, the handler), and requests would pile statements onto a pool that gets no answers.
    if (Date.now() - this.#releaseCheckFailedAt < RELEASE_CHECK_BACKOFF_MS) return false;
    try {
      // A check that outlives the bound is left to finish (or time out) on its own; its answer is not waited for.
      const answer = await within(this.#guard?.released(view.held.all), RELEASE_CHECK_MS);
      if (!answer.done) this.#releaseCheckFailedAt = Date.now();
      return answer.done && answer.value === true;
    } catch {
      this.#releaseCheckFailedAt = Date.now();
      return false;
    }
  }

  async #build(catalog: Catalog): Promise<CatalogView> {
    const review = await this.#guard?.reviewAll(hostDefinitions(this.host, catalog));
    const held = new HeldView(review?.held ?? []);
    for (const h of held.all)
      if (this.#reported.first(h))
        sendWarning(this.#onWarning, { code: 'DEFINITION_HELD', message: heldNotice(h), server: h.server });
    const names = new GatewayNames(catalog, this.namespaced, (kind, server, name) =>
      held.has(server, kind, name),
    );
    const searching =
      this.#toolSearch !== 'off' && (this.#toolSearch === 'on' || names.tools.size > AUTO_SEARCH_TOOLS);
    return { catalog, names, held, searching };
  }

  /**
   * The instructions: the connected servers with theirs, capped; how names are formed; tack's own skills. A
   * catalog the guard has not reviewed yet (it changed between `view()` and this instance) is described without
   * any server's instructions, which may be held.
   */
  instructions(): string {
    const view = this.current();
    if (view?.instructions !== undefined) return view.instructions;
    const all = this.host.servers();
    const servers = all.filter((s) => s.status === 'connected');
    const lines = servers.map((s) => {
      const text =
        !view || view.held.instructionsHeld(s.name) ? '' : (s.instructions ?? '').replace(/\s+/g, ' ').trim();
      const capped = capText(text);
      return `- ${s.name}${capped ? `: ${capped}` : ''}`;
    });
    // What is not served, and why, where the client sees it: a desktop host shows neither tack's stderr nor its
    // logs, and an empty tool list alone reads as a broken gateway (issue 29).
    for (const s of all) {
      if (s.status === 'connected' || (s.status === 'disabled' && !s.disabledReason)) continue;
      // An error's text may carry what a server sent (an HTTP body, its own words): every client reads these
      // lines, so only printable text, one line, capped.
      const why = printable(s.disabledReason ?? s.error?.message ?? s.status);
      lines.push(`- ${s.name} is not served: ${capText(why.replace(/\s+/g, ' ').trim())}`);
    }
    if (all.length === 0 && this.#configuredFrom !== undefined) lines.push(`- ${this.#configuredFrom}`);
    const naming = this.namespaced
      ? ' Tools and prompts are named <server>__<name>; resource URIs tack://<server>/<uri>.'
      : '';
    const skills = this.skills
      ? [`- tack's own ${this.skills.skills} Agent Skills: skills/list, skill://<name>/SKILL.md`]
      : [];
    const text = [
      `tack gateway in front of ${servers.length} MCP server${servers.length === 1 ? '' : 's'}.${naming}`,
      ...lines,
      ...skills,
    ].join('\n');
    if (view) view.instructions = text;
    return text;
  }

  /** The deny rule that refuses this call (`tool` as `mcp__<server>__<tool>`), or undefined. */
  deniedBy(tool: string, args: unknown): string | undefined {
    return this.#deny?.match(tool, args)?.rule;
  }

  /** The audit label of a downstream client: name@version (transport, era). */
  clientLabel(era: 'modern' | 'legacy', info: { name?: string; version?: string } | undefined): string {
    return `${info?.name ?? 'unknown'}${info?.version ? `@${info.version}` : ''} (${this.transport}, ${era})`;
  }

  /**
   * Awaited before the call's answer goes out: with the PostgreSQL store a call answered is a call whose row is
   * committed; the SQLite store queues it for its next batch (store/audit.ts).
   */
  async record(entry: AuditEntry): Promise<void> {
    try {
      await this.#audit?.record(entry);
      // The outage is over: what went unsaid since its last warning is said now, not lost.
      if (this.#auditUnsaid > 0) {
        const unsaid = this.#auditUnsaid;
        this.#auditUnsaid = 0;
        sendWarning(this.#onWarning, {
          code: 'AUDIT_FAILED',
          message: `${unsaid} more audit row(s) were not written before the audit log answered again`,
        });
      }
    } catch (error) {
      // An audit write that fails (disk full, the database down) must not fail the call it describes; it is said,
      // once per AUDIT_WARNING_INTERVAL_MS with a count: during an outage every call fails its row, and a line per
      // call would flood the log (and, on a stderr pipe nobody drains, the process's memory).
      const now = Date.now();
      if (now - this.#auditWarnedAt < AUDIT_WARNING_INTERVAL_MS) {
        this.#auditUnsaid++;
        return;
      }
      const more = this.#auditUnsaid;
      this.#auditWarnedAt = now;
      this.#auditUnsaid = 0;
      sendWarning(this.#onWarning, {
        code: 'AUDIT_FAILED',
        message: `audit row not written for ${entry.server}/${entry.tool}: ${errorMessage(error)}${more > 0 ? ` (and ${more} more since the last warning)` : ''}`,
        server: entry.server,
      });
    }
  }
}
