import type { ServerStatus } from '../../mcp/connection.js';
import { packageLabel } from '../../mcp/package-resolve.js';
import { describeStatus } from '../../sandbox/launch.js';
import { pinnedCommand } from '../../security/package-pins.js';
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
    for (const s of servers) printPackage(s);
    for (const s of servers) printProblems(s);
    return failed;
  });
}

/**
 * What a package runner ran, and a warning when its command names no fixed version: with npx a new release is held
 * at its first start (its version is read from npm's cache); other runners are not read, so it just runs.
 */
function printPackage(s: ServerStatus): void {
  const p = s.package;
  if (!p) return;
  const line = p.pinned
    ? `package ${packageLabel(p)} (${p.runner}, pinned by ${p.pinned === 'digest' ? 'digest' : 'version'})`
    : `package ${packageLabel(p)} (${p.runner}) unpinned: \`${p.requested}\` names no fixed version; ${
        p.version
          ? 'a new release is held at the start that brings it until accepted (`tack pins diff`)'
          : `tack cannot see which version ${p.runner} runs, so a new release runs unnoticed`
      }; pin it: ${pinnedCommand(p)}`;
  print(`\n${s.name}: ${line}`);
}

function printProblems(s: ServerStatus): void {
  if (s.disabledReason) print(`\n${s.name}: not started: ${s.disabledReason}`);
  if (!s.error) return;
  print(`\n${s.name}: ${s.error.message}`);
  for (const line of s.error.details) print(`  ${line}`);
  if (s.error.hint) print(`  hint: ${s.error.hint}`);
  if (s.logFile) print(`  log: ${s.logFile}`);
}
