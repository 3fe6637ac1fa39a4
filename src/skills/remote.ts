import { type Skill, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import type { McpHost } from '../mcp/host.js';
import { compareText } from '../util/text-order.js';
import { skillFileError } from './inside-skill.js';
import type { RemoteSkill, SkillEntry } from './library.js';

/** Between a server's name and its skill's: outside both alphabets, so a remote name never equals a local one. */
export const SERVER_SKILL_SEPARATOR = '/';

/**
 * The skills every connected server offers through the Skills extension (`io.modelcontextprotocol/skills`),
 * named `<server>/<skill>`. Files are read through the SDK's SkillsClient, which checks each one against the
 * server's entry (size, digest, front matter): a file that fails is not shown. A server that fails to list is
 * a warning, not a failure of the others.
 */
export async function serverSkills(host: McpHost): Promise<{ skills: SkillEntry[]; warnings: string[] }> {
  const skills: SkillEntry[] = [];
  const warnings: string[] = [];
  await Promise.all(
    host.servers().map(async (status) => {
      const client = status.status === 'connected' ? host.connection(status.name).client : undefined;
      if (!client) return;
      const skillsClient = new SkillsClient(client);
      if (!skillsClient.supported) return;
      try {
        const listing = await skillsClient.list({}, {});
        for (const invalid of listing.invalid) {
          warnings.push(
            `server '${status.name}': skill entry ${invalid.uri ?? `#${invalid.index}`}: ${invalid.reason}`,
          );
        }
        for (const skill of listing.skills) skills.push(toEntry(status.name, skill, skillsClient));
      } catch (error) {
        warnings.push(`server '${status.name}': could not list its skills: ${(error as Error).message}`);
      }
    }),
  );
  skills.sort((a, b) => compareText(a.name, b.name));
  return { skills, warnings };
}

function toEntry(server: string, skill: Skill, client: SkillsClient): SkillEntry {
  const name = `${server}${SERVER_SKILL_SEPARATOR}${skill.frontmatter.name}`;
  const root = skill.uri.replace(/SKILL\.md$/, '');
  const relativeOf = (uri: string) => (uri.startsWith(root) ? uri.slice(root.length) : uri);
  const remote: RemoteSkill = {
    server,
    uri: skill.uri,
    async body() {
      const file = await client.read(skill);
      return file.body ?? file.text ?? '';
    },
    async files() {
      return skill.resources === 'dynamic' ? [] : skill.resources.map((r) => relativeOf(r.uri));
    },
    async read(path) {
      if (skill.resources !== 'dynamic' && !skill.resources.some((r) => relativeOf(r.uri) === path)) {
        throw skillFileError(name, path, 'is not one of the files the server lists for this skill');
      }
      return (await client.read(skill, path)).bytes;
    },
  };
  return {
    name,
    description: skill.frontmatter.description,
    dir: root,
    file: skill.uri,
    scope: 'server',
    remote,
  };
}
