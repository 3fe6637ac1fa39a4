import { TackError } from '../errors.js';
import { invalidText, renderEntry, type SkillLibrary } from '../skills/library.js';
import { scanSkill } from '../skills/scan.js';
import { readSkill } from '../skills/skill.js';
import { toolCatalogView } from '../skills/tool-check.js';
import { type ValidateOptions, validateSkill } from '../skills/validate.js';
import { countTokens } from '../tokens/count.js';
import type { Route } from './routes.js';

/** Tier 1 as the model gets it, with each skill's entry cost (what `tack skills list` and `index` show). */
export async function skillsIndex(library: SkillLibrary | undefined, contextWindow: number) {
  if (!library) return { index: undefined, skills: [], invalid: [], warnings: [] };
  const index = await library.renderIndex({ countTokens, contextWindow });
  const indexed = new Map(index.entries.map((e) => [e.name, e]));
  const skills = [];
  for (const skill of library.skills) {
    const entry = indexed.get(skill.name);
    // The poisoning scan's verdict, for the badge (docs/security.md, Skills); a served skill is scanned at activation.
    const scan = skill.remote ? undefined : await scanSkill(await readSkill(skill.dir));
    skills.push({
      name: skill.name,
      description: skill.description,
      scope: skill.scope,
      path: skill.file,
      indexTokens: entry?.tokens ?? (await countTokens(renderEntry(skill, skill.description))),
      shortened: entry?.shortened ?? false,
      dropped: !entry,
      scan: scan ? { verdict: scan.verdict, score: scan.score } : undefined,
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
    // Found but not offered: the validator's errors say why (validate.ts, skillVerdict).
    invalid: library.invalid.map((skill) => ({
      name: skill.name,
      scope: skill.scope,
      path: skill.file,
      reasons: skill.errors.map((e) => e.message),
    })),
    warnings: library.warnings,
  };
}

/**
 * Tier 2 and 3 of one skill: its body, its files and what the validator says of it; with `tools`, also of the
 * tools it names, against the console's live catalog and the schemas the skill was pinned with.
 */
export async function skillDetail(
  library: SkillLibrary | undefined,
  name: string,
  tools?: ValidateOptions['tools'],
) {
  if (!library) throw new TackError('UNKNOWN_SKILL', `no skill named "${name}"`);
  const invalid = library.get(name) ? undefined : library.invalid.find((s) => s.name === name);
  if (invalid) {
    // Not offered, so not activated: its page shows why, and the validator's findings.
    const text = `[${invalidText(invalid)}.]`;
    return {
      name: invalid.name,
      description: '',
      scope: invalid.scope,
      dir: invalid.dir,
      valid: false,
      body: text,
      bodyTokens: await countTokens(text),
      files: [],
      issues: await validateSkill(await readSkill(invalid.dir), { countTokens }),
    };
  }
  const skill = library.require(name);
  const body = await library.activate(skill.name);
  const source = skill.remote ? undefined : await readSkill(skill.dir);
  const issues = source ? await validateSkill(source, { countTokens, ...(tools ? { tools } : {}) }) : [];
  const scan = source ? await scanSkill(source) : undefined;
  return {
    name: skill.name,
    description: skill.description,
    scope: skill.scope,
    dir: skill.dir,
    valid: true,
    body: body.text,
    bodyTokens: await countTokens(body.text),
    files: body.files,
    issues,
    scan: scan
      ? {
          verdict: scan.verdict,
          score: scan.score,
          findings: scan.findings.filter((f) => f.severity !== 'low'),
        }
      : undefined,
  };
}

/** One of a skill's files, read inside its folder (tier 3, as read_skill_file does). */
export async function skillFile(library: SkillLibrary | undefined, name: string, path: string) {
  if (!library) throw new TackError('UNKNOWN_SKILL', `no skill named "${name}"`);
  return library.readFile(name, path);
}

/** The skills page: the tier-1 index, a skill's body and findings, one of its files. */
export const skillRoutes: Route[] = [
  {
    method: 'GET',
    path: 'skills',
    json: async ({ context }) =>
      skillsIndex(await context.skills(), context.config.agent.contextWindow ?? 200_000),
  },
  {
    method: 'GET',
    path: 'skills/:skill',
    json: async ({ context, params }) =>
      skillDetail(await context.skills(), params.skill!, {
        catalog: toolCatalogView(context.host.catalog),
        ...(context.host.store ? { pins: context.host.store.pins } : {}),
      }),
  },
  {
    method: 'GET',
    path: 'skills/:skill/file',
    json: async ({ context, params, query }) =>
      skillFile(await context.skills(), params.skill!, query.get('path') ?? ''),
  },
];
