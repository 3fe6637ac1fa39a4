import type { TackConfig } from '../../config/load.js';
import { type EnvSource, stdioEnvironment } from '../../mcp/transport.js';
import { loadToolsFile } from '../../search/bench.js';
import {
  type Finding,
  type ScannableTool,
  scanText,
  scanTool,
  type ToolScan,
  verdictOf,
} from '../../security/scan.js';
import { print, printJson } from '../output.js';
import { type GlobalOptions, withHost } from '../with-host.js';

export interface ScanOptions extends GlobalOptions {
  /** Scan exported definitions offline (tools.json) instead of the configured servers. */
  tools?: string;
}

interface Report {
  server: string;
  name: string;
  verdict: ToolScan['verdict'];
  findings: Finding[];
}

/** What one stdio server's process receives of the environment: names only, never values. */
interface ServerEnvironment {
  server: string;
  enabled: boolean;
  variables: Array<{ name: string; source: EnvSource }>;
}

/** `--json`: one verdict per tool, and what each configured stdio server receives of the environment. */
interface ScanJson {
  tools: Report[];
  environments: ServerEnvironment[];
}

/**
 * `tack scan [--tools tools.json] [--json]`: poisoning checks (docs/security.md) on every tool definition, one
 * verdict per tool; without --tools, on the configured servers' tools and instructions, followed by the names of
 * the environment variables each stdio server receives and where each comes from. Exit 1 when any tool would be
 * blocked.
 */
export async function scanCommand(options: ScanOptions): Promise<number> {
  const { reports, environments } = options.tools
    ? { reports: scanAll(loadToolsFile(options.tools)), environments: [] }
    : await scanServers(options);
  if (options.json) printJson({ tools: reports, environments } satisfies ScanJson);
  else {
    for (const r of reports.filter((x) => x.verdict !== 'clean')) {
      print(`${r.verdict.toUpperCase()} ${r.server}/${r.name}`);
      for (const f of r.findings.filter((x) => x.severity !== 'low'))
        print(
          `  ${f.severity} ${f.code}${f.location.field ? ` (${f.location.field})` : ''}: ${f.message}\n    ${JSON.stringify(f.match)}${f.decoded ? `\n    decoded: ${JSON.stringify(f.decoded)}` : ''}`,
        );
    }
    if (environments.length > 0) print(describeEnvironments(environments));
    const count = (v: ToolScan['verdict']) => reports.filter((r) => r.verdict === v).length;
    print(
      `${reports.length} scanned: ${count('block')} block, ${count('warn')} warn, ${count('clean')} clean`,
    );
  }
  return reports.some((r) => r.verdict === 'block') ? 1 : 0;
}

/** `scanBytes`: tack.json `limits.scanBytes` when a config was loaded (the scanner's default otherwise). */
function scanAll(tools: readonly ScannableTool[], scanBytes?: number): Report[] {
  const knownServers = [...new Set(tools.map((t) => t.server))];
  return tools.map((tool) => {
    // Naming a sibling on the same server is documentation ("call search_notes first"); naming another
    // server's tool is the shadowing sign.
    const knownTools = tools.filter((t) => t.server !== tool.server).map((t) => t.name);
    const { verdict, findings } = scanTool(tool, { knownTools, knownServers, scanBytes });
    return { server: tool.server, name: tool.name, verdict, findings };
  });
}

async function scanServers(
  options: ScanOptions,
): Promise<{ reports: Report[]; environments: ServerEnvironment[] }> {
  return withHost(options, undefined, async (host, _signal, config) => {
    const reports = scanAll(
      host.catalog.tools.map((t) => ({
        server: t.server,
        name: t.definition.name,
        ...(t.definition.title ? { title: t.definition.title } : {}),
        ...(t.definition.description ? { description: t.definition.description } : {}),
        inputSchema: t.definition.inputSchema,
      })),
      config.limits.scanBytes,
    );
    for (const server of host.servers()) {
      if (!server.instructions) continue;
      const findings = scanText(
        server.instructions,
        { kind: 'instructions', server: server.name },
        { scanBytes: config.limits.scanBytes },
      );
      reports.push({ server: server.name, name: '(instructions)', verdict: verdictOf(findings), findings });
    }
    return { reports, environments: environmentsOf(config) };
  });
}

/** From the function the stdio transport spawns with, so the listing is what the processes really get. */
function environmentsOf(config: TackConfig): ServerEnvironment[] {
  return config.servers.flatMap((server) =>
    server.transport === 'stdio'
      ? [{ server: server.name, enabled: server.enabled, variables: stdioEnvironment(server).variables }]
      : [],
  );
}

function describeEnvironments(environments: readonly ServerEnvironment[]): string {
  const names = (e: ServerEnvironment, source: EnvSource) =>
    e.variables.filter((v) => v.source === source).map((v) => v.name);
  const lines = environments.map((e) => {
    const parts = [`${names(e, 'safe-default').join(', ') || '(none)'} (safe default)`];
    const configured = names(e, 'configured');
    if (configured.length > 0) parts.push(`${configured.join(', ')} (configured)`);
    const sandbox = names(e, 'sandbox');
    if (sandbox.length > 0) parts.push(`${sandbox.join(', ')} (its sandbox)`);
    return `  ${e.server}${e.enabled ? '' : ' (disabled)'}: ${parts.join('; ')}`;
  });
  return [
    "Environment of stdio servers (names only; nothing else of tack's environment is passed on):",
    ...lines,
  ].join('\n');
}
