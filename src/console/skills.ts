import { TackError } from '../errors.js';
import { renderEntry, type SkillLibrary } from '../skills/library.js';
import { readSkill } from '../skills/skill.js';
import { validateSkill } from '../skills/validate.js';
import { countTokens } from '../tokens/count.js';

/** Tier 1 as the model gets it, with each skill's entry cost (what `tack skills list` and `index` show). */
export async function skillsIndex(library: SkillLibrary | undefined, contextWindow: number) {
  if (!library) return { index: undefined, skills: [], warnings: [] };
  const index = await library.renderIndex({ countTokens, contextWindow });
  const indexed = new Map(index.entries.map((e) => [e.name, e]));
  const skills = [];
  for (const skill of library.skills) {
    const entry = indexed.get(skill.name);
    skills.push({
      name: skill.name,
      description: skill.description,
      scope: skill.scope,
      path: skill.file,
      indexTokens: entry?.tokens ?? (await countTokens(renderEntry(skill, skill.description))),
      shortened: entry?.shortened ?? false,
      dropped: !entry,
    });
  }
  return {
    index: {
      text: index.text,
      tokens: index.tokens,
      budgetTokens: index.budgetTokens,
      dropped: index.dropped,
    },
    skills,
    warnings: library.warnings,
  };
}

/** Tier 2 and 3 of one skill: its body, its files and what the validator says of it. */
export async function skillDetail(library: SkillLibrary | undefined, name: string) {
  if (!library) throw new TackError('UNKNOWN_SKILL', `no skill named "${name}"`);
  const skill = library.require(name);
  const body = await library.activate(skill.name);
  const issues = skill.remote ? [] : await validateSkill(await readSkill(skill.dir), { countTokens });
  return {
    name: skill.name,
    description: skill.description,
    scope: skill.scope,
    dir: skill.dir,
    body: body.text,
    bodyTokens: await countTokens(body.text),
    files: body.files,
    issues,
  };
}

/** One of a skill's files, read inside its folder (tier 3, as read_skill_file does). */
export async function skillFile(library: SkillLibrary | undefined, name: string, path: string) {
  if (!library) throw new TackError('UNKNOWN_SKILL', `no skill named "${name}"`);
  return library.readFile(name, path);
}
