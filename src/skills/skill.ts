import { basename, join } from 'node:path';
import { type FrontMatter, type FrontMatterOptions, readFrontMatter } from '../util/front-matter.js';
import { readPrefix } from './bounded-read.js';

export const SKILL_FILE = 'SKILL.md';

/**
 * The largest SKILL.md tack reads: 1 MiB. The Agent Skills spec asks for a body under 500 lines and 5,000 tokens
 * (some 20 KB), so an honest skill, even one ten times past that advice, is far below it; and a body of 1 MiB
 * is some 250,000 tokens, more than most models' whole context window, so nothing a model could use is lost.
 * Past it the skill still lists (its front matter is read from the head), but its body is not loaded:
 * activate_skill says so, and the validator reports it as an error.
 */
export const MAX_SKILL_BYTES = 1024 * 1024;

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
  /** The SKILL.md's size in bytes when it passes MAX_SKILL_BYTES: its body was not read (`frontMatter.body` is empty). */
  oversized?: number;
  /** The SKILL.md's text before its body (the front matter and its fences), as written: servable.ts checks it. */
  head: string;
}

/** The skill's SKILL.md, read up to MAX_SKILL_BYTES: past it, the front matter only, and `oversized` set. */
export async function readSkill(dir: string): Promise<SkillSource> {
  const file = join(dir, SKILL_FILE);
  const { bytes, size } = await readPrefix(file, MAX_SKILL_BYTES + 1);
  const source = parseSkill(dir, bytes.toString('utf8'));
  if (size <= MAX_SKILL_BYTES) return source;
  return { ...source, frontMatter: { ...source.frontMatter, body: '' }, oversized: size };
}

/** Why an oversized SKILL.md's body is not loaded, and what to do (`tack skills list`, the validator, activation). */
export function oversizedText(bytes: number): string {
  return (
    `SKILL.md is ${bytes} bytes, over the cap of ${MAX_SKILL_BYTES} bytes (${MAX_SKILL_BYTES / 1024 / 1024} MiB) for a skill's instructions: ` +
    'its body is not loaded. Keep SKILL.md short (the Agent Skills spec recommends under 500 lines and 5,000 ' +
    'tokens) and move the details to files its body names (references/...), which are read one at a time'
  );
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
    head: linesBefore(text, frontMatter.bodyLine),
  };
}

/** The text of the lines before `line` (1-based), without splitting the rest of a long text. */
function linesBefore(text: string, line: number): string {
  let end = 0;
  for (let n = 1; n < line && end >= 0; n++) end = text.indexOf('\n', end) + 1 || -1;
  return end < 0 ? text : text.slice(0, end);
}

/** The folder's own name, which the skill's name must equal. */
export function folderName(skill: SkillSource): string {
  return basename(skill.dir);
}
