import { join } from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import type { StdioServerConfig } from '../../config/load.js';
import type { SandboxPolicy } from '../../config/sandbox.js';
import { unknownServer } from '../../mcp/host.js';
import { stdioEnvironment } from '../../mcp/transport.js';
import { type CheckReport, checkSandbox } from '../../sandbox/probe.js';
import { print, printJson, table, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

interface Target {
  subject: string;
  policy: SandboxPolicy;
  cwd: string;
  env: Record<string, string>;
  command?: string;
  args?: readonly string[];
  stateDir?: string;
}

/**
 * `tack sandbox check [server] [--skill-scripts]`: runs a probe inside each sandbox policy (every sandboxed stdio
 * server and the skill scripts', or the one named) and prints what it could and could not reach next to what the
 * policy says. Exit 1 when the two disagree anywhere, or when a required sandbox cannot be had.
 */
export async function sandboxCheckCommand(
  server: string | undefined,
  options: GlobalOptions & { skillScripts?: boolean },
): Promise<number> {
  const config = await loadCliConfig(options);
  const targets: Target[] = [];
  const unsandboxed: string[] = [];
  const notes: string[] = [];
  if (server !== undefined) {
    const entry = config.servers.find((s) => s.name === server);
    if (!entry)
      throw unknownServer(
        server,
        config.servers.map((s) => s.name),
      );
    if (entry.transport === 'stdio' && entry.sandbox) targets.push(serverTarget(entry, entry.sandbox));
    else unsandboxed.push(`server "${entry.name}"`);
  } else if (!options.skillScripts) {
    for (const entry of config.servers)
      if (entry.transport === 'stdio' && entry.enabled && entry.sandbox)
        targets.push(serverTarget(entry, entry.sandbox));
    if (targets.length === 0)
      notes.push(
        'No server has a sandbox (give one a "sandbox" in tack.json, or set sandbox.defaultForServers): only the skill scripts\' sandbox is checked.',
      );
  }
  if (server === undefined) {
    const scripts = config.sandbox.skillScripts;
    if (scripts)
      targets.push({
        subject: 'skill scripts',
        policy: scripts,
        cwd: scripts.workspace,
        env: getDefaultEnvironment(),
        // A script runs with a state folder of its skill's inside the policy's, never the policy's own.
        stateDir: join(scripts.stateDir, 'tack-sandbox-check'),
      });
    else unsandboxed.push('skill scripts');
  }
  const reports: Array<{ subject: string; origin: string; report?: CheckReport; error?: string }> = [];
  for (const target of targets) {
    try {
      reports.push({
        subject: target.subject,
        origin: target.policy.origin,
        report: await checkSandbox(target.policy, {
          subject: target.subject,
          cwd: target.cwd,
          env: target.env,
          ...(target.command !== undefined ? { command: target.command, args: target.args ?? [] } : {}),
          ...(target.stateDir ? { stateDir: target.stateDir } : {}),
          note: (message) => {
            if (!message.startsWith('sandbox proxy:')) warn(`${target.subject}: ${message}`);
          },
        }),
      });
    } catch (error) {
      reports.push({
        subject: target.subject,
        origin: target.policy.origin,
        error: (error as Error).message,
      });
    }
  }
  const failed = reports.some((r) => r.error !== undefined || (r.report?.mismatches ?? 0) > 0);
  if (options.json) {
    printJson({ checked: reports, unsandboxed, notes });
    return failed ? 1 : 0;
  }
  for (const note of notes) print(`${note}\n`);
  for (const name of unsandboxed) print(`${name}: no sandbox\n`);
  for (const { subject, origin, report, error } of reports) {
    if (error !== undefined || !report) {
      print(`${subject}: cannot check (${origin}): ${error}\n`);
      continue;
    }
    const status = report.status;
    if (status.state !== 'enforced') {
      print(
        `${subject}: its sandbox is NOT enforced here (${origin}): ${status.state === 'unenforced' ? status.reason : status.state}\n`,
      );
      continue;
    }
    print(`${subject}: ${status.guarantees.summary}, enforced by ${status.tool} (${origin})`);
    print(`files: ${status.guarantees.files}`);
    print(
      table(
        ['CHECK', 'TARGET', 'POLICY', 'PROBE', 'RULE'],
        report.rows.map((row) => [
          row.check,
          `${row.target} (${row.label})`,
          row.expected,
          row.observed === row.expected ? row.observed : `${row.observed} (MISMATCH)`,
          row.rule,
        ]),
      ),
    );
    print(
      report.mismatches === 0
        ? 'Every check agrees with the policy.\n'
        : `${report.mismatches} ${report.mismatches === 1 ? 'check disagrees' : 'checks disagree'} with the policy.\n`,
    );
  }
  return failed ? 1 : 0;
}

function serverTarget(entry: StdioServerConfig, policy: SandboxPolicy): Target {
  return {
    subject: `server "${entry.name}"`,
    policy,
    cwd: entry.cwd,
    env: stdioEnvironment(entry).env,
    command: entry.command,
    args: entry.args,
  };
}
