import type { TackConfig } from '../config/load.js';
import type { McpHost } from '../mcp/host.js';
import type { DiscoverOptions } from './discover.js';
import { SkillLibrary } from './library.js';
import { serverSkills } from './remote.js';

export interface LoadSkillsOptions extends Omit<DiscoverOptions, 'configFolders'> {
  /** Its `skills` folders join the scopes after the user's. */
  config?: Pick<TackConfig, 'skillFolders'>;
  /** When given, the skills its connected servers offer over MCP join the index, as `<server>/<skill>`. */
  host?: McpHost;
}

/** Every skill tack offers the model: project, user and config scopes from disk, then the servers' skills. */
export async function loadSkills(options: LoadSkillsOptions = {}): Promise<SkillLibrary> {
  const { config, host, ...discover } = options;
  const local = await SkillLibrary.discover({ ...discover, configFolders: config?.skillFolders ?? [] });
  if (!host) return local;
  const remote = await serverSkills(host);
  return local.with(remote.skills, remote.warnings);
}
