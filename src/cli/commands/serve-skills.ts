import { startSkillsServer } from '../../servers/skills/start.js';
import { notServedText } from '../../skills/library.js';
import { loadSkills } from '../../skills/load.js';
import { printErr, warn } from '../output.js';
import { httpFromOptions, untilStopped } from '../serving.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface ServeSkillsOptions extends GlobalOptions {
  http?: string;
  trustProject?: boolean;
}

/** `tack serve-skills [--http [host:]port] [--trust-project]`: every skill tack finds, over MCP. */
export async function serveSkillsCommand(options: ServeSkillsOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const library = await loadSkills({ config, trustProject: options.trustProject });
  for (const warning of library.warnings) warn(warning);
  const server = await startSkillsServer({
    library,
    http: httpFromOptions(options.http, config.serve),
    onWarning: (warning) => warn(`skills: ${warning}`),
  });
  printErr(
    `tack serve-skills: ${server.uris.length} skills${notServedText(library.invalid)}` +
      `${server.url ? ` at ${server.url}` : ' on stdio'}\n`,
  );
  await untilStopped(Boolean(server.url));
  await server.close();
  return 0;
}
