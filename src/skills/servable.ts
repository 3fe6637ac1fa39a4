import { SkillCatalogError, skillEntry } from '@modelcontextprotocol/server/ext/skills';
import { plainYaml } from '../util/front-matter.js';
import { folderName, SKILL_FILE, type SkillSource } from './skill.js';

/**
 * What the MCP Skills extension (the SDK's SkillCatalog, behind `tack serve-skills` and `tack serve`) refuses in
 * a SKILL.md's front matter that tack's own rules let through: its YAML is a subset (no anchors, aliases or tags,
 * no duplicate keys, no `: ` in a plain value). Asked of the SDK itself, on the front matter only, so the two can
 * never disagree: a skill tack calls valid is one the catalog serves, and one it would skip is invalid everywhere,
 * with the SDK's reason. Front matter in the plain subset tack reads without a YAML parser (`key: value` lines,
 * quoted strings, flat lists and maps: plainYaml) reads the same in both, so only the rest is handed to the SDK,
 * whose check costs a hash and a parse per skill (test/skills/verdict.test.ts holds the two readers together).
 */
export async function servingProblems(skill: SkillSource): Promise<Array<{ line: number; message: string }>> {
  if (plainYaml(skill.head) !== undefined) return [];
  try {
    await skillEntry(folderName(skill), { [SKILL_FILE]: skill.head });
    return [];
  } catch (error) {
    if (!SkillCatalogError.isInstance(error)) throw error;
    return error.problems.map((problem) => ({
      line: Number(/\bline (\d+)\b/.exec(problem.message)?.[1] ?? 1),
      message: `${problem.message} (the MCP Skills extension reads front matter in a YAML subset; tack serve-skills and tack serve could not serve this skill)`,
    }));
  }
}
