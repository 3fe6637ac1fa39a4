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
import { type GlobalOptions, withHost } from '../session.js';

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

/**
 * `tack scan [--tools tools.json] [--json]`: poisoning checks (docs/security.md) on every tool definition, one
 * verdict per tool; without --tools, on the configured servers' tools and instructions. Exit 1 when any tool
 * would be blocked.
 */
export async function scanCommand(options: ScanOptions): Promise<number> {
  const reports = options.tools ? scanAll(loadToolsFile(options.tools)) : await scanServers(options);
  if (options.json) printJson(reports);
  else {
    for (const r of reports.filter((x) => x.verdict !== 'clean')) {
      print(`${r.verdict.toUpperCase()} ${r.server}/${r.name}`);
      for (const f of r.findings.filter((x) => x.severity !== 'low'))
        print(
          `  ${f.severity} ${f.code}${f.location.field ? ` (${f.location.field})` : ''}: ${f.message}\n    ${JSON.stringify(f.match)}${f.decoded ? `\n    decoded: ${JSON.stringify(f.decoded)}` : ''}`,
        );
    }
    const count = (v: ToolScan['verdict']) => reports.filter((r) => r.verdict === v).length;
    print(
      `${reports.length} scanned: ${count('block')} block, ${count('warn')} warn, ${count('clean')} clean`,
    );
  }
  return reports.some((r) => r.verdict === 'block') ? 1 : 0;
}

function scanAll(tools: readonly ScannableTool[]): Report[] {
  const knownServers = [...new Set(tools.map((t) => t.server))];
  return tools.map((tool) => {
    // Naming a sibling on the same server is documentation ("call search_notes first"); naming another
    // server's tool is the shadowing sign.
    const knownTools = tools.filter((t) => t.server !== tool.server).map((t) => t.name);
    const { verdict, findings } = scanTool(tool, { knownTools, knownServers });
    return { server: tool.server, name: tool.name, verdict, findings };
  });
}

async function scanServers(options: ScanOptions): Promise<Report[]> {
  return withHost(options, undefined, async (host) => {
    const reports = scanAll(
      host.catalog.tools.map((t) => ({
        server: t.server,
        name: t.definition.name,
        ...(t.definition.title ? { title: t.definition.title } : {}),
        ...(t.definition.description ? { description: t.definition.description } : {}),
        inputSchema: t.definition.inputSchema,
      })),
    );
    for (const server of host.servers()) {
      if (!server.instructions) continue;
      const findings = scanText(server.instructions, { kind: 'instructions', server: server.name });
      reports.push({ server: server.name, name: '(instructions)', verdict: verdictOf(findings), findings });
    }
    return reports;
  });
}
