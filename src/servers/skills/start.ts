import { type SkillCatalog, SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import { TackError } from '../../errors.js';
import { type InvalidSkill, SkillLibrary } from '../../skills/library.js';
import { blockedSkills } from '../../skills/scan.js';
import { countTokens } from '../../tokens/count.js';
import { type HttpOptions, type Served, serveHttp, serveOnStdio } from '../serve.js';
import { librarySkillFiles } from './files.js';
import { skillsServerFactory } from './server.js';

/** The skills to serve and the transport. */
export interface SkillsServerOptions {
  library: SkillLibrary;
  /** Serve over Streamable HTTP instead of stdio. */
  http?: HttpOptions | undefined;
  /** Where the catalog's problems go (a skill it skips, a file over the limits). Default: stderr. */
  onWarning?: (warning: string) => void;
}

/** A started skills server: its URL over HTTP, the skill resources it serves, and how to stop it. */
export interface RunningSkillsServer extends Served {
  /** The skill URIs served (`skill://<name>/SKILL.md`). */
  uris: readonly string[];
}

/** `tack serve-skills`: the library's skills over MCP, stdio or HTTP. */
export async function startSkillsServer(options: SkillsServerOptions): Promise<RunningSkillsServer> {
  const { library } = options;
  const { catalog, uris, blocked } = await loadSkillsCatalog(library, options.onWarning);
  // What is served: the skills the catalog took, each located by its skill:// URI rather than a local path.
  const uriOf = new Map(catalog.entries.map((e) => [e.frontmatter.name, e.uri]));
  const servedSkills = new SkillLibrary(
    library.skills
      .filter((s) => !s.remote && uriOf.has(s.name))
      .map((s) => {
        const uri = uriOf.get(s.name)!;
        return { ...s, file: uri, location: uri.replace(/SKILL\.md$/, '') };
      }),
    [],
    // activate_skill on one of them says why it is not served, rather than that there is no such skill.
    [...library.invalid, ...blocked],
  );
  const index = await servedSkills.renderIndex({ countTokens });
  const factory = skillsServerFactory(servedSkills, catalog, index.text);
  const served = options.http ? await serveHttp(factory, options.http) : serveOnStdio(factory);
  return { ...served, uris };
}

/**
 * The SDK's SkillCatalog of the library's skills on disk (librarySkillFiles), and the URIs it serves. A skill the
 * poisoning scan blocks is not served (`blocked`, with a warning each): the host on the other side may load a
 * skill's body straight from its resource, with no scan and no way to tell the model it is held.
 */
export async function loadSkillsCatalog(
  library: SkillLibrary,
  onWarning: (warning: string) => void = (w) => process.stderr.write(`tack: skills: ${w}\n`),
): Promise<{ catalog: SkillCatalog; uris: string[]; blocked: InvalidSkill[] }> {
  const blocked = await blockedSkills(library);
  for (const skill of blocked)
    onWarning(`${skill.file}: not served: ${skill.errors[0]!.message} (tack skills validate ${skill.dir})`);
  const held = new Set(blocked.map((s) => s.name));
  const catalog = await SkillsExtension.load(librarySkillFiles(library, held), {
    onWarning: (w) => onWarning(`${w.path}: ${w.message}`),
  });
  if (catalog.entries.length === 0 && library.skills.some((s) => !s.remote && !held.has(s.name))) {
    throw new TackError('SKILL_FILE', 'none of the skills could be served', {
      hint: 'tack skills validate shows what is wrong with them.',
    });
  }
  return { catalog, uris: catalog.entries.map((e) => e.uri), blocked };
}
