import { projectSkillsTrusted } from '../config/apply-trust.js';
import type { TackConfig } from '../config/load.js';
import type { McpHost } from '../mcp/host.js';
import type { DiscoverOptions } from './discover.js';
import { SkillLibrary } from './library.js';
import { serverSkills } from './remote.js';

/** Where to find skills: the configuration's folders, the working folder and home, a host with servers' skills. */
export interface LoadSkillsOptions extends Omit<DiscoverOptions, 'configFolders'> {
  /**
   * Its `skills` folders join the scopes after the user's. When it went through applyProjectTrust and the project
   * is trusted, the project's skills load too (`trustProject` adds them for one run either way).
   */
  config?: Pick<TackConfig, 'skillFolders' | 'projectTrust'>;
  /** When given, the skills its connected servers offer over MCP join the index, as `<server>/<skill>`. */
  host?: McpHost;
}

/** Every skill tack offers the model: project, user and config scopes from disk, then the servers' skills. */
export async function loadSkills(options: LoadSkillsOptions = {}): Promise<SkillLibrary> {
  const { config, host, ...discover } = options;
  const local = await SkillLibrary.discover({
    ...discover,
    trustProject: discover.trustProject === true || (config ? projectSkillsTrusted(config) : false),
    configFolders: config?.skillFolders ?? [],
  });
  if (!host) return local;
  const remote = await serverSkills(host);
  return local.with(remote.skills, remote.warnings);
}
