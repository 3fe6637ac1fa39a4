import { DEFAULT_CONTEXT_WINDOW } from '../agent/options.js';
import { DeferredTools } from '../agent/tool-search.js';
import { type AgentTool, mcpAgentTools, mcpToolSecurity, withSandboxFacts } from '../agent/toolset.js';
import type { TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import type { Catalog, CatalogTool } from '../mcp/catalog.js';
import { hostDefinitions } from '../mcp/definitions.js';
import type { McpHost } from '../mcp/host.js';
import { packageLabel, type ResolvedPackage } from '../mcp/package-resolve.js';
import { describeStatus } from '../sandbox/launch.js';
import { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from '../search/meta-tools.js';
import type { CapabilityLabel } from '../security/capabilities.js';
import { pinnedCommand } from '../security/package-pins.js';
import { DefinitionGuard, guardOptions, type HeldDefinition } from '../security/pins.js';
import { type Finding, scanTool } from '../security/scan.js';
import { toolDefinitionsTokens } from '../tokens/count.js';
import type { ConsoleContext } from './context.js';
import { offsetOf, type Route } from './routes.js';

/** One row of the tools table: what `tack tools` and `tack tools --security` print, per tool. */
export interface ToolRow {
  name: string;
  server: string;
  tool: string;
  title: string;
  /** The first line of the description, cut: the full text comes with the definition. */
  summary: string;
  tokens: number;
  alwaysLoad: boolean;
  capabilities: CapabilityLabel[];
  ruledOut: CapabilityLabel[];
  /** `pinned`, `changed` or `flagged` (held back), or `no store`. */
  pin: string;
  held?: string;
  /** The `ui://` resource of an MCP App, when its definition links one. */
  app?: string;
  /** `model` and/or `app` (MCP Apps visibility; both by default). */
  visibility: string[];
}

export interface ServerTotals {
  server: string;
  tools: number;
  tokens: number;
}

/** Everything the servers page shows of the catalog, computed once per catalog and kept until it changes. */
export interface CatalogView {
  rows: ToolRow[];
  perServer: ServerTotals[];
  /** Every MCP definition sent every step. */
  inlineTokens: number;
  /**
   * What a deferred step sends instead: search_tools, call_tool and the always-loaded tools; only when a session
   * defers (a session that does not sends `inlineTokens`, and no deferred figure is true of it).
   */
  deferredTokens: number | undefined;
  /** Whether a session with this configuration defers, decided as the harness decides it (DeferredTools.defers). */
  deferred: boolean;
  mode: 'auto' | 'on' | 'off';
  contextWindow: number;
  held: HeldDefinition[];
  findings: Array<{ tool: string; server: string; findings: Finding[] }>;
  trifecta: { untrustedInput: string[]; privateData: string[]; egress: string[] };
}

/** MCP Apps: `_meta.ui.resourceUri` (and the deprecated flat `_meta["ui/resourceUri"]`). */
export function appResourceOf(tool: CatalogTool['definition']): string | undefined {
  const meta = tool._meta as Record<string, unknown> | undefined;
  const ui = meta?.ui as { resourceUri?: unknown } | undefined;
  const uri = typeof ui?.resourceUri === 'string' ? ui.resourceUri : meta?.['ui/resourceUri'];
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : undefined;
}

export function visibilityOf(tool: CatalogTool['definition']): string[] {
  const ui = (tool._meta as Record<string, unknown> | undefined)?.ui as { visibility?: unknown } | undefined;
  const list = Array.isArray(ui?.visibility) ? ui.visibility.filter((v) => v === 'model' || v === 'app') : [];
  return list.length > 0 ? list : ['model', 'app'];
}

function firstLine(text: string, max = 160): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Builds the view of the host's current catalog; the caller keeps it until the catalog object changes. */
export async function catalogView(host: McpHost, config: TackConfig): Promise<CatalogView> {
  const catalog: Catalog = host.catalog;
  const settings = new Map(config.servers.map((s) => [s.name, s]));
  const sent: AgentTool[] = mcpAgentTools(host, settings, catalog.tools);
  const counts = await toolDefinitionsTokens(sent, host.store?.tokenCounts, config.agent.model);
  const [searchTokens = 0, callTokens = 0] = await toolDefinitionsTokens(
    [SEARCH_TOOLS_DEFINITION, CALL_TOOL_DEFINITION],
    host.store?.tokenCounts,
    config.agent.model,
  );
  // Reviewed as `tack tools --security` does: new definitions pinned, changed or flagged ones held.
  const guard = host.store && new DefinitionGuard(host.store.pins, guardOptions(config, host.store));
  const held = guard ? (await guard.reviewAll(hostDefinitions(host))).held : [];
  const heldByTool = new Map(
    held.filter((h) => h.kind === 'tool').map((h) => [`${h.server}\u0000${h.name}`, h] as const),
  );
  const withFacts = withSandboxFacts(settings, host);
  const findings: CatalogView['findings'] = [];
  const perServer = new Map<string, ServerTotals>();
  const rows = catalog.tools.map((tool, i): ToolRow => {
    const { definition } = tool;
    const hold = heldByTool.get(`${tool.server}\u0000${definition.name}`);
    const { labels, ruledOut } = mcpToolSecurity(tool, withFacts);
    const alwaysLoad = settings.get(tool.server)?.alwaysLoad ?? false;
    const scan = scanTool({ server: tool.server, ...definition }, { scanBytes: config.limits.scanBytes });
    if (scan.findings.length > 0)
      findings.push({ tool: tool.name, server: tool.server, findings: scan.findings });
    const totals = perServer.get(tool.server) ?? { server: tool.server, tools: 0, tokens: 0 };
    perServer.set(tool.server, totals);
    totals.tools++;
    totals.tokens += counts[i]!;
    const app = appResourceOf(definition);
    return {
      name: tool.name,
      server: tool.server,
      tool: definition.name,
      title: definition.title ?? definition.annotations?.title ?? '',
      summary: firstLine(definition.description ?? ''),
      tokens: counts[i]!,
      alwaysLoad:
        alwaysLoad === true ||
        (Array.isArray(alwaysLoad) && alwaysLoad.some((n) => n === definition.name || n === tool.name)),
      capabilities: [...labels],
      ruledOut: [...ruledOut],
      pin: host.store ? (hold?.why ?? 'pinned') : 'no store',
      ...(hold ? { held: hold.reason } : {}),
      ...(app ? { app } : {}),
      visibility: visibilityOf(definition),
    };
  });
  const inlineTokens = rows.reduce((n, r) => n + r.tokens, 0);
  const mode = config.agent.toolSearch ?? 'auto';
  const contextWindow = config.agent.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  // The session's own rule over the definitions it would be sent, not a copy of it that could drift.
  const deferred = new DeferredTools(undefined, { mode }).defers(sent, contextWindow);
  const deferredTokens = deferred
    ? searchTokens + callTokens + rows.filter((r) => r.alwaysLoad).reduce((n, r) => n + r.tokens, 0)
    : undefined;
  const holders = (capability: string) =>
    rows.filter((r) => r.capabilities.some((l) => l.capability === capability)).map((r) => r.name);
  return {
    rows,
    perServer: [...perServer.values()],
    inlineTokens,
    deferredTokens,
    deferred,
    mode,
    contextWindow,
    held,
    findings,
    trifecta: {
      untrustedInput: holders('untrusted-input'),
      privateData: holders('private-data'),
      egress: holders('egress'),
    },
  };
}

/** The servers table: `tack servers`, with each server's sandbox in words. */
export function serverRows(host: McpHost) {
  return host.servers().map((s) => ({
    name: s.name,
    transport: s.transport,
    status: s.status,
    disabledReason: s.disabledReason,
    era: s.era,
    eraSource: s.eraSource,
    protocolVersion: s.protocolVersion,
    serverInfo: s.serverInfo ? { name: s.serverInfo.name, version: s.serverInfo.version } : undefined,
    counts: s.counts,
    connectMs: s.connectMs,
    restarts: s.restarts,
    error: s.error,
    diagnostics: s.diagnostics,
    sandbox: describeStatus(s.sandbox),
    package: packageView(s.package),
  }));
}

/** What a package runner ran (`npx -y pkg`), whether the command fixes its version, and the command that would. */
export function packageView(p: ResolvedPackage | undefined) {
  return (
    p && {
      label: packageLabel(p),
      runner: p.runner,
      requested: p.requested,
      pinned: p.pinned,
      ...(p.pinned ? {} : { fix: pinnedCommand(p) }),
    }
  );
}

/** A tool's row and catalog entry, for the routes on `tools/:tool`: UNKNOWN_TOOL (404) when either is missing. */
export async function toolOf(context: ConsoleContext, name: string) {
  const row = (await context.catalogView()).rows.find((r) => r.name === name);
  const entry = context.host.catalog.getTool(name);
  if (!row || !entry)
    throw new TackError('UNKNOWN_TOOL', `no tool named ${name}`, { subject: { tool: name } });
  return { row, entry };
}

/** Whether the pin guard holds tool `name` back (a call from the page or a view is then refused). */
export async function isHeld(context: ConsoleContext, name: string): Promise<boolean> {
  return (await context.catalogView()).rows.find((r) => r.name === name)?.held !== undefined;
}

/** The servers page: the servers table and what the catalog costs; the tools table, a page at a time. */
export const catalogRoutes: Route[] = [
  {
    method: 'GET',
    path: 'servers',
    async json({ context }) {
      const catalog = await context.catalogView();
      return {
        servers: serverRows(context.host),
        perServer: catalog.perServer,
        inlineTokens: catalog.inlineTokens,
        deferredTokens: catalog.deferredTokens,
        deferred: catalog.deferred,
        mode: catalog.mode,
        contextWindow: catalog.contextWindow,
        tools: catalog.rows.length,
      };
    },
  },
  {
    method: 'GET',
    path: 'tools',
    async json({ context, query }) {
      const catalog = await context.catalogView();
      const q = (query.get('q') ?? '').toLowerCase();
      const server = query.get('server') ?? '';
      const offset = offsetOf(query);
      const limit = Math.min(500, Math.max(1, Number(query.get('limit')) || 100));
      let rows = catalog.rows.filter(
        (r) =>
          (!server || r.server === server) &&
          (!q || r.name.toLowerCase().includes(q) || r.summary.toLowerCase().includes(q)),
      );
      if ((query.get('sort') ?? 'tokens') === 'tokens') rows = [...rows].sort((a, b) => b.tokens - a.tokens);
      return { total: rows.length, offset, rows: rows.slice(offset, offset + limit) };
    },
  },
  {
    method: 'GET',
    path: 'tools/:tool',
    async json({ context, params }) {
      const { row, entry } = await toolOf(context, params.tool!);
      return { row, definition: entry.definition };
    },
  },
];
