import { realpath } from 'node:fs/promises';
import { isAbsolute, join, sep } from 'node:path';
import { TackError } from '../errors.js';
import type { SkillEntry } from './library.js';

/**
 * The real path of `path` inside the skill's folder: relative, no `..`, and after symlinks still inside.
 * scripts.ts applies the same rule below scripts/.
 */
export async function resolveInside(skill: SkillEntry, path: string, under = ''): Promise<string> {
  const clean = path.replace(/\\/g, '/');
  if (!clean || isAbsolute(clean) || /^[A-Za-z]:/.test(clean) || clean.split('/').includes('..')) {
    throw skillFileError(skill.name, path, 'must be a path inside the skill folder (relative, no "..")');
  }
  const base = join(skill.dir, under);
  const candidate = join(base, clean);
  const real = await realpath(candidate).catch(() => undefined);
  if (!real) throw skillFileError(skill.name, path, 'does not exist');
  const realBase = await realpath(base).catch(() => base);
  if (real !== realBase && !real.startsWith(realBase + sep)) {
    throw skillFileError(
      skill.name,
      path,
      `leads outside ${under ? `${under}/ of ` : ''}the skill folder (a symlink)`,
    );
  }
  return real;
}

export function skillFileError(name: string, path: string, why: string): TackError {
  return new TackError('SKILL_FILE', `skill '${name}': ${path} ${why}`, {
    hint: 'activate_skill lists the files of a skill.',
  });
}
