import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { TackError } from '../errors.js';
import { pushAll } from '../util/arrays.js';
import { skillFolders } from './discover.js';
import { contentWords, OVERLAP_THRESHOLD, overlaps } from './overlap.js';
import { depthOf, findReferences } from './references.js';
import { folderName, oversizedText, readSkill, SKILL_FILE, type SkillSource } from './skill.js';

/**
 * The Agent Skills rules (specs/agentskills-specification.mdx) with the reference validator's wording
 * (skills-ref), so a user who knows one recognises the other, plus tack's own warnings beyond the spec. Every
 * issue names the SKILL.md and the line.
 */
export type Severity = 'error' | 'warning';

export type SkillRule =
  | 'frontmatter'
  | 'unknown-field'
  | 'name'
  | 'directory'
  | 'description'
  | 'compatibility'
  | 'license'
  | 'metadata'
  | 'allowed-tools'
  | 'body-size'
  | 'missing-reference'
  | 'deep-reference'
  | 'when'
  | 'overlap';

export interface SkillIssue {
  severity: Severity;
  rule: SkillRule;
  file: string;
  line: number;
  message: string;
}

export interface ValidateOptions {
  /** Unknown front matter fields are errors instead of warnings. */
  strict?: boolean;
  /** Token counter for the body-size warning; without one only lines are counted. */
  countTokens?: (text: string) => Promise<number>;
}

export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_COMPATIBILITY_LENGTH = 500;
export const MAX_BODY_LINES = 500;
export const MAX_BODY_TOKENS = 5000;
export const ALLOWED_FIELDS = [
  'name',
  'description',
  'license',
  'allowed-tools',
  'metadata',
  'compatibility',
];

/** A description shorter than this, with no "when" either, cannot tell a model when to pick the skill. */
const SPECIFIC_WORDS = 12;
const TRIGGER =
  /\b(use (this|it|when|for|whenever|to)|used (when|for|whenever)|when(ever)?|trigger(s|ed)?|should (be )?use|if the user|apply (it )?to)\b/i;

export async function validateSkill(
  skill: SkillSource,
  options: ValidateOptions = {},
): Promise<SkillIssue[]> {
  const issues: SkillIssue[] = [];
  const fm = skill.frontMatter;
  const lineOf = (key: string) => fm.keyLines.get(key) ?? 1;
  const add = (severity: Severity, rule: SkillRule, line: number, message: string) =>
    issues.push({ severity, rule, file: skill.file, line, message });

  if (!fm.present) {
    add('error', 'frontmatter', 1, 'SKILL.md must start with YAML frontmatter (---)');
    return issues;
  }
  for (const problem of fm.problems) {
    // skills-ref's wording where it has one.
    const message =
      problem.kind === 'unclosed'
        ? 'SKILL.md frontmatter not properly closed with ---'
        : problem.kind === 'yaml'
          ? `Invalid YAML in frontmatter: ${problem.message.replace(/^invalid YAML: /, '')}`
          : problem.kind === 'not-mapping'
            ? 'SKILL.md frontmatter must be a YAML mapping'
            : `SKILL.md ${problem.message}`;
    add('error', 'frontmatter', problem.line, message);
  }
  if (fm.problems.length > 0) return issues;

  const data = fm.data;
  const unknown = Object.keys(data)
    .filter((key) => !ALLOWED_FIELDS.includes(key))
    .sort();
  if (unknown.length > 0) {
    add(
      options.strict ? 'error' : 'warning',
      'unknown-field',
      lineOf(unknown[0]!),
      `Unexpected fields in frontmatter: ${unknown.join(', ')}. Only [${[...ALLOWED_FIELDS]
        .sort()
        .map((f) => `'${f}'`)
        .join(', ')}] are allowed.`,
    );
  }

  checkName(data.name, skill, lineOf('name'), add);
  checkDescription(data.description, lineOf('description'), add);

  if ('compatibility' in data) {
    const value = data.compatibility;
    if (typeof value !== 'string')
      add('error', 'compatibility', lineOf('compatibility'), "Field 'compatibility' must be a string");
    else if (value.length > MAX_COMPATIBILITY_LENGTH) {
      add(
        'error',
        'compatibility',
        lineOf('compatibility'),
        `Compatibility exceeds ${MAX_COMPATIBILITY_LENGTH} character limit (${value.length} chars)`,
      );
    }
  }
  if ('license' in data && typeof data.license !== 'string') {
    add('error', 'license', lineOf('license'), "Field 'license' must be a string");
  }
  if ('allowed-tools' in data && typeof data['allowed-tools'] !== 'string') {
    add(
      'error',
      'allowed-tools',
      lineOf('allowed-tools'),
      "Field 'allowed-tools' must be a space-separated string",
    );
  }
  if ('metadata' in data) {
    const metadata = data.metadata;
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      add(
        'error',
        'metadata',
        lineOf('metadata'),
        "Field 'metadata' must be a mapping of string keys to string values",
      );
    } else {
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== 'string') {
          add(
            'warning',
            'metadata',
            lineOf('metadata'),
            `metadata.${key} is a ${Array.isArray(value) ? 'list' : typeof value}, not a string; quote it ("${String(value)}")`,
          );
        }
      }
    }
  }

  await checkBody(skill, options, add);
  return issues;
}

type Add = (severity: Severity, rule: SkillRule, line: number, message: string) => void;

function checkName(value: unknown, skill: SkillSource, line: number, add: Add): void {
  if (value === undefined) {
    add('error', 'name', 1, 'Missing required field in frontmatter: name');
    return;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    add('error', 'name', line, "Field 'name' must be a non-empty string");
    return;
  }
  const name = value.trim().normalize('NFKC');
  if (name.length > MAX_NAME_LENGTH) {
    add(
      'error',
      'name',
      line,
      `Skill name '${name}' exceeds ${MAX_NAME_LENGTH} character limit (${name.length} chars)`,
    );
  }
  if (name !== name.toLowerCase()) add('error', 'name', line, `Skill name '${name}' must be lowercase`);
  if (name.startsWith('-') || name.endsWith('-'))
    add('error', 'name', line, 'Skill name cannot start or end with a hyphen');
  if (name.includes('--')) add('error', 'name', line, 'Skill name cannot contain consecutive hyphens');
  // The spec allows a-z, 0-9 and "-" (skills-ref also lets other Unicode letters through; the spec does not).
  if (!/^[a-z0-9-]*$/.test(name.toLowerCase())) {
    add(
      'error',
      'name',
      line,
      `Skill name '${name}' contains invalid characters. Only letters, digits, and hyphens are allowed.`,
    );
  }
  const folder = folderName(skill).normalize('NFKC');
  if (folder !== name)
    add('error', 'directory', line, `Directory name '${folderName(skill)}' must match skill name '${name}'`);
}

function checkDescription(value: unknown, line: number, add: Add): void {
  if (value === undefined) {
    add('error', 'description', 1, 'Missing required field in frontmatter: description');
    return;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    add('error', 'description', line, "Field 'description' must be a non-empty string");
    return;
  }
  if (value.length > MAX_DESCRIPTION_LENGTH) {
    add(
      'error',
      'description',
      line,
      `Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${value.length} chars)`,
    );
  }
  if (!TRIGGER.test(value) && contentWords(value).size < SPECIFIC_WORDS) {
    add(
      'warning',
      'when',
      line,
      'Description says what the skill does but not when to use it: add "Use when ..." with the tasks and keywords that should trigger it',
    );
  }
}

async function checkBody(skill: SkillSource, options: ValidateOptions, add: Add): Promise<void> {
  if (skill.oversized !== undefined) {
    // Its body was not read: nothing below could be checked.
    add('error', 'body-size', 1, oversizedText(skill.oversized));
    return;
  }
  const { body, bodyLine } = skill.frontMatter;
  const lines = body.split('\n').length;
  if (lines > MAX_BODY_LINES) {
    add(
      'warning',
      'body-size',
      bodyLine,
      `Body has ${lines} lines (keep SKILL.md under ${MAX_BODY_LINES}; move details to referenced files)`,
    );
  }
  if (options.countTokens) {
    const tokens = await options.countTokens(body);
    if (tokens > MAX_BODY_TOKENS) {
      add(
        'warning',
        'body-size',
        bodyLine,
        `Body is ${tokens} tokens (keep it under ${MAX_BODY_TOKENS}; it is loaded whole at activation)`,
      );
    }
  }
  const reported = new Set<string>();
  for (const ref of findReferences(body, bodyLine)) {
    const target = normalize(join(skill.dir, ref.path));
    if (target !== skill.dir && !target.startsWith(skill.dir + sep)) continue; // ../elsewhere: not the skill's file
    if (!existsSync(target) && !reported.has(ref.path)) {
      reported.add(ref.path);
      add('warning', 'missing-reference', ref.line, `Referenced file does not exist: ${ref.path}`);
    }
    if (depthOf(ref.path) > 1 && !reported.has(`deep:${ref.path}`)) {
      reported.add(`deep:${ref.path}`);
      add(
        'warning',
        'deep-reference',
        ref.line,
        `Reference ${ref.path} is more than one level deep (keep references one level from SKILL.md)`,
      );
    }
  }
}

/** Across skills: two descriptions so alike that a model could not tell the skills apart (overlap.ts). */
export function validateOverlap(skills: readonly SkillSource[], threshold = OVERLAP_THRESHOLD): SkillIssue[] {
  const described = skills.filter((s): s is SkillSource & { description: string } => Boolean(s.description));
  return overlaps(
    described.map((s) => s.description),
    threshold,
  ).map(({ a: i, b: j, score }) => {
    const [a, b] = [described[i]!, described[j]!];
    return {
      severity: 'warning' as const,
      rule: 'overlap' as const,
      file: b.file,
      line: b.frontMatter.keyLines.get('description') ?? 1,
      message: `Description overlaps ${Math.round(score * 100)}% with ${a.file} ('${a.name ?? folderName(a)}'): a model may not tell the two skills apart`,
    };
  });
}

/** `file:line: severity: message`, the file relative to `cwd` when it is below it (what editors link). */
export function formatIssue(issue: SkillIssue, cwd?: string): string {
  const rel = cwd ? relative(cwd, issue.file) : '';
  const file = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : issue.file;
  return `${file}:${issue.line}: ${issue.severity}: ${issue.message}`;
}

/**
 * What `tack skills validate` checks: each path is a skill folder, its SKILL.md, or a folder of skill folders.
 * Every skill found is validated, then all of them together for overlapping descriptions.
 */
export async function validatePaths(
  paths: readonly string[],
  options: ValidateOptions = {},
): Promise<{ skills: SkillSource[]; issues: SkillIssue[]; warnings: string[] }> {
  const warnings: string[] = [];
  const dirs: string[] = [];
  for (const path of paths) {
    const absolute = resolve(path);
    const info = await stat(absolute).catch(() => undefined);
    if (!info) {
      throw new TackError('SKILL_FILE', `${path} does not exist`, {
        hint: 'Give a skill folder, its SKILL.md, or a folder of skills.',
      });
    }
    if (info.isFile()) {
      if (basename(absolute) !== SKILL_FILE) {
        throw new TackError('SKILL_FILE', `${path} is not a ${SKILL_FILE}`, {
          hint: 'Give a skill folder, its SKILL.md, or a folder of skills.',
        });
      }
      dirs.push(dirname(absolute));
    } else if (existsSync(join(absolute, SKILL_FILE))) dirs.push(absolute);
    else {
      const found = await skillFolders(absolute, {}, warnings);
      if (found.length === 0) warnings.push(`${path}: no folder with a ${SKILL_FILE} in it`);
      pushAll(dirs, found);
    }
  }
  const skills = await Promise.all([...new Set(dirs)].map((dir) => readSkill(dir)));
  const issues = (await Promise.all(skills.map((skill) => validateSkill(skill, options)))).flat();
  pushAll(issues, validateOverlap(skills));
  return { skills, issues, warnings };
}
