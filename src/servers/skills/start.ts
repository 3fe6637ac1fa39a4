import type { McpServer } from '@modelcontextprotocol/server';
import { SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import { TackError } from '../../errors.js';
import { SkillLibrary } from '../../skills/library.js';
import { countTokens } from '../../tokens/count.js';
import { type HttpOptions, type Served, serveHttp, serveOnStdio } from '../serve.js';
import { librarySkillFiles } from './files.js';
import { buildSkillsServer } from './server.js';

export interface SkillsServerOptions {
  library: SkillLibrary;
  /** Serve over Streamable HTTP instead of stdio. */
  http?: HttpOptions | undefined;
  /** Where the catalog's problems go (a skill it skips, a file over the limits). Default: stderr. */
  onWarning?: (warning: string) => void;
}

export interface RunningSkillsServer extends Served {
  /** The skill URIs served (`skill://<name>/SKILL.md`). */
  uris: readonly string[];
}

/** `tack serve-skills`: the library's skills over MCP, stdio or HTTP. */
export async function startSkillsServer(options: SkillsServerOptions): Promise<RunningSkillsServer> {
  const { factory, uris } = await startSkillsCatalog(options.library, options.onWarning);
  const served = options.http ? await serveHttp(factory, options.http) : serveOnStdio(factory);
  return { ...served, uris };
}

/**
 * The catalog of the library's skills on disk (the SDK's SkillCatalog over librarySkillFiles) and a factory of
 * servers that offer it; `tack serve-skills` serves them, the gateway runs one in process.
 */
export async function startSkillsCatalog(
  library: SkillLibrary,
  onWarning: (warning: string) => void = (w) => process.stderr.write(`tack: skills: ${w}\n`),
): Promise<{ factory: () => McpServer; uris: string[] }> {
  const catalog = await SkillsExtension.load(librarySkillFiles(library), {
    onWarning: (w) => onWarning(`${w.path}: ${w.message}`),
  });
  if (catalog.entries.length === 0 && library.skills.some((s) => !s.remote)) {
    throw new TackError('SKILL_FILE', 'none of the skills could be served', {
      hint: 'tack skills validate shows what is wrong with them.',
    });
  }
  // What is served: the skills the catalog took, each located by its skill:// URI rather than a local path.
  const uris = new Map(catalog.entries.map((e) => [e.frontmatter.name, e.uri]));
  const servedSkills = new SkillLibrary(
    library.skills
      .filter((s) => !s.remote && uris.has(s.name))
      .map((s) => {
        const uri = uris.get(s.name)!;
        return { ...s, file: uri, location: uri.replace(/SKILL\.md$/, '') };
      }),
  );
  const index = await servedSkills.renderIndex({ countTokens });
  return {
    factory: () => buildSkillsServer(servedSkills, catalog, index.text),
    uris: catalog.entries.map((e) => e.uri),
  };
}
