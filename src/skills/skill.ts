import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { type FrontMatter, type FrontMatterOptions, readFrontMatter } from '../util/front-matter.js';

export const SKILL_FILE = 'SKILL.md';

/** One skill folder as read from disk: its SKILL.md split into front matter and body. */
export interface SkillSource {
  /** The folder (absolute); its name must equal `name`. */
  dir: string;
  /** The SKILL.md path (absolute). */
  file: string;
  frontMatter: FrontMatter;
  /** `name` and `description` when they are strings (validation says what is wrong otherwise). */
  name: string | undefined;
  description: string | undefined;
}

export async function readSkill(dir: string): Promise<SkillSource> {
  const file = join(dir, SKILL_FILE);
  return parseSkill(dir, await readFile(file, 'utf8'));
}

export function parseSkill(dir: string, text: string, options?: FrontMatterOptions): SkillSource {
  const frontMatter = readFrontMatter(text, options);
  const str = (value: unknown) => (typeof value === 'string' ? value.trim() : undefined);
  return {
    dir,
    file: join(dir, SKILL_FILE),
    frontMatter,
    name: str(frontMatter.data.name),
    description: str(frontMatter.data.description),
  };
}

/** The folder's own name, which the skill's name must equal. */
export function folderName(skill: SkillSource): string {
  return basename(skill.dir);
}
