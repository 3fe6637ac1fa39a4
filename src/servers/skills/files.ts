import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { SkillFileEntry, SkillFiles } from '@modelcontextprotocol/server/ext/skills';
import { resolveInside } from '../../skills/inside-skill.js';
import type { SkillEntry, SkillLibrary } from '../../skills/library.js';
import { MAX_SKILL_BYTES } from '../../skills/skill.js';

/**
 * The SDK's skill catalog reads storage through a SkillFiles adapter. tack's skills come from several scopes
 * (project, user, config folders), so no one folder holds them: this adapter shows the library as one virtual
 * root, `<skill name>/<path in its folder>`, over the skills on disk (a server's own skills are not re-served).
 * Dot-files and node_modules are left out, as activate_skill leaves them out; a symlink is shown as what it
 * points to when that stays in the skill's folder, and as unsupported otherwise (the catalog then skips the
 * skill, as it does for the SDK's own nodeSkillFiles). Skills in `held` (blocked by the poisoning scan) are not
 * there at all.
 */
export function librarySkillFiles(library: SkillLibrary, held: ReadonlySet<string> = new Set()): SkillFiles {
  const split = (path: string): [SkillEntry, string] => {
    const [name, ...rest] = path.split('/');
    const skill = library.get(name ?? '');
    if (!skill || skill.remote || held.has(skill.name))
      throw Object.assign(new Error(`no skill '${name}'`), { code: 'ENOENT' });
    return [skill, rest.join('/')];
  };
  return {
    async list(dir) {
      if (dir === '') {
        const served = [];
        for (const s of library.skills)
          if (!s.remote && !held.has(s.name) && (await withinCap(s.file))) served.push(s);
        return served.map((s) => ({ name: s.name, kind: 'directory' as const }));
      }
      const [skill, inner] = split(dir);
      const root = await realpath(skill.dir);
      const folder = inner ? await resolveInside(skill, inner) : root;
      // The folders this one is reached through: a link back to one of them is a loop, which the SDK's catalog
      // would walk until the path is too long (and then refuse every skill: `tack serve` did not start).
      const above = new Set([root]);
      const parts = inner ? inner.split('/') : [];
      for (let i = 1; i <= parts.length; i++)
        above.add(await resolveInside(skill, parts.slice(0, i).join('/')));
      const entries = await readdir(folder, { withFileTypes: true });
      const listed: SkillFileEntry[] = [];
      for (const entry of entries) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
        const path = join(folder, entry.name);
        const kind = await kindOf(path, root);
        if (kind === 'directory' && entry.isSymbolicLink() && above.has(await realpath(path))) continue;
        listed.push({ name: entry.name, kind });
      }
      return listed;
    },
    async read(path) {
      const [skill, inner] = split(path);
      return new Uint8Array(await readFile(await resolveInside(skill, inner)));
    },
  };
}

/**
 * A SKILL.md over MAX_SKILL_BYTES is not served through the Skills extension: the SDK's catalog reads and hashes
 * every file whole, and the library already says the skill's body is not loaded (skills/skill.ts).
 */
async function withinCap(file: string): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  return info !== undefined && info.size <= MAX_SKILL_BYTES;
}

async function kindOf(path: string, root: string): Promise<SkillFileEntry['kind']> {
  const info = await lstat(path);
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (!info.isSymbolicLink()) return 'unsupported';
  const real = await realpath(path).catch(() => undefined);
  if (!real || (real !== root && !real.startsWith(root + sep))) return 'unsupported';
  const target = await stat(real);
  return target.isFile() ? 'file' : target.isDirectory() ? 'directory' : 'unsupported';
}
