import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { readPrefix } from './bounded-read.js';
import { type FileReference, findReferences } from './references.js';
import { SKILL_FILE, type SkillSource } from './skill.js';

/**
 * The reference warnings of one skill: files its SKILL.md names that do not exist, or exist only in another case,
 * and reference chains deeper than the spec's one level.
 *
 * Which mentions are references. A Markdown link outside code always is, and so is a path (`dir/file.ext`) in
 * prose. Code is where skills show examples, and most of those paths are somebody else's (`word/_rels/...` inside
 * a .docx, `evals/evals.json` of the skill being written): a path in a fenced block or an inline code span counts
 * only when its first folder is one the skill has, or one of the spec's (`scripts/`, `references/`, `assets/`),
 * which is how skills name their own scripts (`python scripts/fill.py`). Link syntax in code is not a link (it
 * shows Markdown), and a block labelled `markdown` is a document shown whole (references.ts). A bare file name
 * (`FORMS.md`) counts only when the skill's folder holds that name in another case: it is the reference Linux
 * cannot open.
 *
 * The spec's "keep file references one level deep from SKILL.md" is about chains, not folders: SKILL.md names
 * a file, which should not send the agent on to further files. `references/api/v2/errors.md` named by SKILL.md is
 * one level; `references/guide.md` naming `references/details.md` that SKILL.md does not name is two.
 */
export interface ReferenceFinding {
  rule: 'missing-reference' | 'reference-case' | 'deep-reference';
  file: string;
  line: number;
  message: string;
}

const SPEC_FOLDERS = new Set(['scripts', 'references', 'assets']);
/** Files read for chains: Markdown an agent reads, not scripts it runs or data it loads (requirements.txt). */
const DOCUMENT = /\.(md|markdown|mdx)$/i;
/** Bounds on the chain check: how many referenced documents are read, and how much of each. */
const MAX_DOCUMENTS = 100;
const MAX_DOCUMENT_BYTES = 256 * 1024;

type Resolution = { kind: 'exact' } | { kind: 'case'; actual: string } | { kind: 'missing' };

/**
 * The skill's own regular files its SKILL.md references (relative, `/`-separated, in the order first named): what
 * the poisoning scan reads with the body. Symlinks out of the folder, FIFOs and missing files are left out.
 */
export function referencedFiles(skill: SkillSource): string[] {
  const folder = new Folder(skill.dir);
  return [...directReferences(skill, folder).direct.keys()].filter(
    (path) => path !== SKILL_FILE && folder.isOwnFile(path),
  );
}

function directReferences(
  skill: SkillSource,
  folder: Folder,
): { direct: Map<string, number>; broken: Array<{ ref: FileReference; path: string; found: Resolution }> } {
  /** Files SKILL.md reaches in one step (relative, `/`-separated), in the order first named. */
  const direct = new Map<string, number>();
  const broken: Array<{ ref: FileReference; path: string; found: Resolution }> = [];
  for (const ref of findReferences(skill.frontMatter.body, skill.frontMatter.bodyLine)) {
    const path = inside(ref.path);
    if (path === undefined || !counts(ref, folder)) continue;
    const found = folder.resolve(path);
    if (found.kind === 'exact') {
      if (!direct.has(path)) direct.set(path, ref.line);
    } else broken.push({ ref, path, found });
  }
  return { direct, broken };
}

export async function checkReferences(skill: SkillSource): Promise<ReferenceFinding[]> {
  const folder = new Folder(skill.dir);
  const findings: ReferenceFinding[] = [];
  const reported = new Set<string>();
  const { direct, broken } = directReferences(skill, folder);
  for (const { ref, path, found } of broken) {
    if (ref.kind === 'name' && found.kind === 'missing') continue; // a word with a dot, not a file of the skill
    if (reported.has(path)) continue;
    reported.add(path);
    findings.push(
      found.kind === 'case'
        ? {
            rule: 'reference-case',
            file: skill.file,
            line: ref.line,
            message: `Referenced file ${path} not found; ${found.actual} exists — names are case-sensitive on Linux: write ${found.actual}`,
          }
        : {
            rule: 'missing-reference',
            file: skill.file,
            line: ref.line,
            message: `Referenced file does not exist: ${path}`,
          },
    );
  }
  let read = 0;
  for (const first of direct.keys()) {
    if (!DOCUMENT.test(first) || first === SKILL_FILE || !folder.isOwnFile(first)) continue;
    if (++read > MAX_DOCUMENTS) break;
    const file = join(skill.dir, first);
    const { bytes } = await readPrefix(file, MAX_DOCUMENT_BYTES).catch(() => ({ bytes: Buffer.alloc(0) }));
    // One finding per file, at its first chained reference: a hub file may name a dozen.
    const chained: Array<{ path: string; line: number }> = [];
    for (const ref of findReferences(bytes.toString('utf8'), 1)) {
      if (!counts(ref, folder)) continue;
      const next = [inside(posix.join(posix.dirname(first), ref.path)), inside(ref.path)].find(
        (path) => path !== undefined && folder.resolve(path).kind === 'exact',
      );
      if (!next || next === first || next === SKILL_FILE || direct.has(next)) continue;
      if (!DOCUMENT.test(next) || chained.some((c) => c.path === next) || !folder.isFile(next)) continue;
      chained.push({ path: next, line: ref.line });
    }
    if (chained.length === 0) continue;
    const names = chained.map((c) => c.path);
    const listed =
      names.length <= 5 ? names.join(', ') : `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`;
    findings.push({
      rule: 'deep-reference',
      file,
      line: chained[0]!.line,
      message:
        `${first} refers on to ${names.length === 1 ? 'a file' : `${names.length} files`} SKILL.md does not reference ` +
        `(${listed}): keep file references one level deep from SKILL.md (reference ${names.length === 1 ? 'it' : 'them'} from SKILL.md, or fold ${names.length === 1 ? 'it' : 'them'} into ${first})`,
    });
  }
  return findings;
}

/** Whether a mention is a reference to the skill's own files (the rule above). */
function counts(ref: FileReference, folder: Folder): boolean {
  if (ref.kind === 'name') return true; // checked for a case-only match, and nothing else
  if (!ref.code) return true;
  if (ref.kind === 'link') return false; // `[x](y)` in code shows Markdown; it links nothing
  // In any case: `Scripts/fill.py` for scripts/fill.py is the broken reference to report.
  const top = ref.path.split('/')[0]!;
  return SPEC_FOLDERS.has(top.toLowerCase()) || folder.hasFolder(top);
}

/** The path normalised inside the skill's folder, or undefined when it leads out of it (`../x`). */
function inside(path: string): string | undefined {
  const normal = posix.normalize(path).replace(/\/$/, '');
  if (normal === '.' || normal === '..' || normal.startsWith('../') || posix.isAbsolute(normal))
    return undefined;
  return normal;
}

/**
 * The skill's folder as its files are named: each directory listed once. A name is found when every part of it
 * is listed exactly; a name whose parts are listed only in another case (`FORMS.md` for `forms.md`) is told
 * apart, since a case-insensitive file system (macOS, Windows) opens it while Linux does not.
 */
class Folder {
  readonly #root: string;
  readonly #listings = new Map<string, string[]>();

  constructor(root: string) {
    this.#root = root;
  }

  /** Whether the skill has a folder of this name at its top, in this case or another. */
  hasFolder(name: string): boolean {
    const lower = name.toLowerCase();
    return this.#list('').some((n) => n.toLowerCase() === lower && this.#kind(n) === 'directory');
  }

  isFile(path: string): boolean {
    return this.#kind(path) === 'file';
  }

  /** A regular file that is the skill's own: a symlink out of its folder is not read (nor a FIFO, which would block). */
  isOwnFile(path: string): boolean {
    if (!this.isFile(path)) return false;
    try {
      const root = realpathSync(this.#root);
      return realpathSync(join(this.#root, path)).startsWith(root + sep);
    } catch {
      return false;
    }
  }

  resolve(path: string): Resolution {
    let dir = '';
    let changed = false;
    for (const part of path.split('/')) {
      const names = this.#list(dir);
      let name = names.includes(part) ? part : undefined;
      if (!name) {
        const lower = part.toLowerCase();
        name = names.find((n) => n.toLowerCase() === lower);
        if (!name) return { kind: 'missing' };
        changed = true;
      }
      dir = dir ? `${dir}/${name}` : name;
    }
    return changed ? { kind: 'case', actual: dir } : { kind: 'exact' };
  }

  #list(dir: string): string[] {
    let names = this.#listings.get(dir);
    if (!names) {
      try {
        names = readdirSync(join(this.#root, dir));
      } catch {
        names = [];
      }
      this.#listings.set(dir, names);
    }
    return names;
  }

  #kind(path: string): 'file' | 'directory' | undefined {
    try {
      const info = statSync(join(this.#root, path));
      return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : undefined;
    } catch {
      return undefined;
    }
  }
}
