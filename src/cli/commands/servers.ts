import type { ServerStatus } from '../../mcp/connection.js';
import { describeStatus } from '../../sandbox/launch.js';
import { print, printListing, table } from '../output.js';
import { type GlobalOptions, withHost } from '../with-host.js';

export async function serversCommand(options: GlobalOptions): Promise<number> {
  return withHost({ ...options, quietFailures: true }, undefined, async (host) => {
    const servers = host.servers();
    printListing(options, servers, 'No servers configured. Add mcpServers to tack.json or .mcp.json.', () =>
      table(
        [
          'NAME',
          'TRANSPORT',
          'STATE',
          'ERA',
          'PROTOCOL',
          'SERVER',
          'TOOLS',
          'RESOURCES',
          'PROMPTS',
          'CONNECT',
          'SANDBOX',
        ],
        servers.map((s) => [
          s.name,
          s.transport,
          s.status,
          s.era ? `${s.era}${s.eraSource === 'cache' ? ' (cached)' : ''}` : '-',
          s.protocolVersion ?? '-',
          s.serverInfo ? `${s.serverInfo.name} ${s.serverInfo.version}` : '-',
          String(s.counts.tools),
          String(s.counts.resources + s.counts.resourceTemplates),
          String(s.counts.prompts),
          s.connectMs === undefined ? '-' : `${s.connectMs} ms`,
          describeStatus(s.sandbox),
        ]),
      ),
    );
    // A health check: non-zero when a server that should run does not (held-back and disabled ones do not count).
    const failed = servers.some((s) => s.status === 'failed') ? 1 : 0;
    if (options.json) return failed;
    for (const s of servers) printProblems(s);
    return failed;
  });
}

function printProblems(s: ServerStatus): void {
  if (s.disabledReason) print(`\n${s.name}: not started: ${s.disabledReason}`);
  if (!s.error) return;
  print(`\n${s.name}: ${s.error.message}`);
  for (const line of s.error.details) print(`  ${line}`);
  if (s.error.hint) print(`  hint: ${s.error.hint}`);
  if (s.logFile) print(`  log: ${s.logFile}`);
}
