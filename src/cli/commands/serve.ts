import { flushAudit, startGateway } from '../../servers/gateway/start.js';
import { notServedText } from '../../skills/library.js';
import { loadSkills } from '../../skills/load.js';
import { printErr, warn } from '../output.js';
import { parseListen, untilStopped } from '../serving.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

/** How long requests in flight may take to finish after SIGTERM (serve.drainTimeoutMs). */
const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

export interface ServeOptions extends GlobalOptions {
  http?: string;
  /** Also the project's skills (.agents/skills, .claude/skills). */
  trustProject?: boolean;
}

/** `tack serve [--http [host:]port]`: every configured server behind one MCP endpoint. */
export async function serveCommand(options: ServeOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const skills = await loadSkills({ config, trustProject: options.trustProject });
  for (const warning of skills.warnings) warn(warning);
  const gateway = await startGateway({
    config,
    http: options.http === undefined ? undefined : parseListen(options.http),
    skills,
    onWarning: (warning) => warn(warning.message),
  });
  const servers = gateway.host.servers();
  for (const server of servers) if (server.error) warn(server.error.message);
  for (const clash of gateway.gateway.names().clashes)
    warn(`hidden by a name clash (serve.namespace is false): ${clash}`);
  const up = servers.filter((s) => s.status === 'connected').length;
  printErr(
    `tack serve: ${gateway.host.catalog.tools.length} tools from ${up} of ${servers.length} servers` +
      `${gateway.skills ? `, ${gateway.skills} skills` : ''}` +
      notServedText(skills.invalid) +
      `${gateway.url ? ` at ${gateway.url}${config.serve.token ? ' (bearer token required)' : ''}` : ' on stdio'}\n`,
  );
  // However the process ends short of a SIGKILL, the audit rows still waiting are written (store/audit.ts).
  process.once('exit', () => flushAudit(gateway.host));
  await untilStopped(Boolean(gateway.url));
  if (!gateway.url) {
    await gateway.close();
    return 0;
  }
  // SIGTERM from an orchestrator or a rolling restart: /readyz says no, requests in flight finish, then exit.
  const timeoutMs = config.serve.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  printErr(`tack serve: draining (up to ${timeoutMs} ms for requests in flight)\n`);
  const { finished, cut } = await gateway.drain(timeoutMs);
  printErr(
    `tack serve: stopped; ${finished} request${finished === 1 ? '' : 's'} finished while draining${cut ? `, ${cut} cut off at the timeout` : ''}\n`,
  );
  return 0;
}
