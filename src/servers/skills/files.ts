import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { SkillFileEntry, SkillFiles } from '@modelcontextprotocol/server/ext/skills';
import { resolveInside } from '../../skills/inside-skill.js';
import type { SkillEntry, SkillLibrary } from '../../skills/library.js';

/**
 * The SDK's skill catalog reads storage through a SkillFiles adapter. tack's skills come from several scopes
 * (project, user, config folders), so no one folder holds them: this adapter shows the library as one virtual
 * root, `<skill name>/<path in its folder>`, over the skills on disk (a server's own skills are not re-served).
 * Dot-files and node_modules are left out, as activate_skill leaves them out; a symlink is shown as what it
 * points to when that stays in the skill's folder, and as unsupported otherwise (the catalog then skips the
 * skill, as it does for the SDK's own nodeSkillFiles).
 */
export function librarySkillFiles(library: SkillLibrary): SkillFiles {
  const split = (path: string): [SkillEntry, string] => {
    const [name, ...rest] = path.split('/');
    const skill = library.get(name ?? '');
    if (!skill || skill.remote) throw Object.assign(new Error(`no skill '${name}'`), { code: 'ENOENT' });
    return [skill, rest.join('/')];
  };
  return {
    async list(dir) {
      if (dir === '') {
        return library.skills
          .filter((s) => !s.remote)
          .map((s) => ({ name: s.name, kind: 'directory' as const }));
      }
      const [skill, inner] = split(dir);
      const root = await realpath(skill.dir);
      const folder = inner ? await resolveInside(skill, inner) : root;
      const entries = await readdir(folder, { withFileTypes: true });
      const listed: SkillFileEntry[] = [];
      for (const entry of entries) {
        if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
        listed.push({ name: entry.name, kind: await kindOf(join(folder, entry.name), root) });
      }
      return listed;
    },
    async read(path) {
      const [skill, inner] = split(path);
      return new Uint8Array(await readFile(await resolveInside(skill, inner)));
    },
  };
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
