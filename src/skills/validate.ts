import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { TackError } from '../errors.js';
import type { SkillScan } from '../security/scan-skill.js';
import { pushAll } from '../util/arrays.js';
import { skillFolders } from './discover.js';
import { contentWords, OVERLAP_THRESHOLD, overlaps } from './overlap.js';
import { checkReferences } from './reference-check.js';
import { scanDescription, scanSkill, skillFindingText } from './scan.js';
import { servingProblems } from './servable.js';
import { folderName, oversizedText, readSkill, SKILL_FILE, type SkillSource } from './skill.js';
import {
  checkSkillTools,
  type SkillToolPins,
  skillPinIdentity,
  type ToolCatalogView,
  type ToolFindingRule,
} from './tool-check.js';

/**
 * The Agent Skills rules (specs/agentskills-specification.mdx) with the reference validator's wording
 * (skills-ref), so a user who knows one recognises the other, plus tack's own warnings beyond the spec. Every
 * issue names the file and the line. An error means the skill is invalid: tack does not offer it (index, tools,
 * serve-skills, tack serve) and every listing says why; warnings never keep a skill out (skillVerdict).
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
  | 'reference-case'
  | 'deep-reference'
  | 'when'
  | 'overlap'
  | 'poisoning'
  | ToolFindingRule;

/** A rule a skill breaks, at a file and line, as an error or a warning. */
export interface SkillIssue {
  severity: Severity;
  rule: SkillRule;
  file: string;
  line: number;
  message: string;
}

/** Whether unknown fields are errors, and the token counter for the size warnings. */
export interface ValidateOptions {
  /** Unknown front matter fields are errors instead of warnings. */
  strict?: boolean;
  /** Token counter for the body-size warning; without one only lines are counted. */
  countTokens?: (text: string) => Promise<number>;
  /**
   * The live catalog (`tack skills validate --servers`): the tools a skill names are checked against it, and,
   * with `pins`, against the schemas the skill was pinned with (tool-check.ts).
   */
  tools?: { catalog: ToolCatalogView; pins?: SkillToolPins };
  /** Characters the poisoning scan reads in one window (tack.json `limits.scanBytes`). */
  scanBytes?: number;
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

/** A skill's verdict: invalid when any issue is an error; the errors say why. */
export interface SkillVerdict {
  valid: boolean;
  errors: SkillIssue[];
  warnings: SkillIssue[];
}

export function verdictOf(issues: readonly SkillIssue[]): SkillVerdict {
  const errors = issues.filter((i) => i.severity === 'error');
  return { valid: errors.length === 0, errors, warnings: issues.filter((i) => i.severity === 'warning') };
}

/** Every rule: the head's (which decide the verdict), then the body's (warnings only). */
export async function validateSkill(
  skill: SkillSource,
  options: ValidateOptions = {},
): Promise<SkillIssue[]> {
  const issues = await checkHead(skill, options);
  if (!skill.frontMatter.present || skill.frontMatter.problems.length > 0) return issues;
  await checkBody(skill, options, (severity, rule, line, message, file = skill.file) =>
    issues.push({ severity, rule, file, line, message }),
  );
  return issues;
}

/**
 * The verdict on a skill from its SKILL.md's head alone, which is all discovery reads: every error rule is a rule
 * of the front matter or of the file's size, so this is the verdict `tack skills validate` gives too. The loader,
 * `tack skills list`, serve-skills, `tack serve` and the console all take it from here.
 */
export async function skillVerdict(skill: SkillSource, options: ValidateOptions = {}): Promise<SkillVerdict> {
  return verdictOf(await checkHead(skill, options));
}

/**
 * The front matter's rules and the size cap, and then what the MCP Skills extension's own checks refuse
 * (servable.ts): a skill tack lists as valid is one `tack serve-skills` can serve.
 */
async function checkHead(skill: SkillSource, options: ValidateOptions): Promise<SkillIssue[]> {
  const issues = frontMatterIssues(skill, options);
  if (skill.oversized !== undefined) {
    // Its body was not read: the body's rules could not be checked either.
    issues.push({
      severity: 'error',
      rule: 'body-size',
      file: skill.file,
      line: 1,
      message: oversizedText(skill.oversized),
    });
  }
  if (!issues.some((i) => i.severity === 'error')) {
    for (const problem of await servingProblems(skill)) {
      issues.push({ severity: 'error', rule: 'frontmatter', file: skill.file, ...problem });
    }
  }
  // The description goes into the index every turn, before any activation could hold the skill: a description
  // the poisoning scan blocks makes the skill invalid (not offered, not served), like a broken front matter.
  pushAll(issues, scanIssues(scanDescription(skill, options.scanBytes)));
  return issues;
}

/** The scan's medium and high findings as issues: a high one in a blocked scan is an error, the rest warnings. */
function scanIssues(scan: SkillScan): SkillIssue[] {
  return scan.findings
    .filter((f) => f.severity !== 'low')
    .map((f) => ({
      severity: scan.verdict === 'block' && f.severity === 'high' ? 'error' : 'warning',
      rule: 'poisoning',
      file: f.file,
      line: f.line,
      message: skillFindingText(f),
    }));
}

function frontMatterIssues(skill: SkillSource, options: ValidateOptions): SkillIssue[] {
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
    else if (value === '')
      add('error', 'compatibility', lineOf('compatibility'), "Field 'compatibility' must not be empty");
    else if (characters(value) > MAX_COMPATIBILITY_LENGTH) {
      add(
        'error',
        'compatibility',
        lineOf('compatibility'),
        `Compatibility exceeds ${MAX_COMPATIBILITY_LENGTH} character limit (${characters(value)} chars)`,
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
      // An error, not a style point: the spec says string values, and the MCP Skills extension refuses the skill.
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== 'string') {
          add(
            'error',
            'metadata',
            lineOf('metadata'),
            `metadata.${key} is a ${Array.isArray(value) ? 'list' : typeof value}, not a string; quote it ("${String(value)}")`,
          );
        }
      }
    }
  }

  return issues;
}

type Add = (severity: Severity, rule: SkillRule, line: number, message: string, file?: string) => void;

/** Characters as the spec counts them: code points (an emoji is one, not two UTF-16 units). */
function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function checkName(value: unknown, skill: SkillSource, line: number, add: Add): void {
  if (value === undefined) {
    add('error', 'name', 1, 'Missing required field in frontmatter: name');
    return;
  }
  if (typeof value !== 'string' || value.trim() === '') {
    add('error', 'name', line, "Field 'name' must be a non-empty string");
    return;
  }
  // As written: the spec allows a-z, 0-9 and "-" only, so no normalisation makes another name valid.
  const name = value;
  if (characters(name) > MAX_NAME_LENGTH) {
    add(
      'error',
      'name',
      line,
      `Skill name '${name}' exceeds ${MAX_NAME_LENGTH} character limit (${characters(name)} chars)`,
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
  if (folderName(skill) !== name)
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
  if (characters(value) > MAX_DESCRIPTION_LENGTH) {
    add(
      'error',
      'description',
      line,
      `Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${characters(value)} chars)`,
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
  if (skill.oversized !== undefined) return; // not read: checkHead said so
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
  for (const finding of await checkReferences(skill)) {
    add('warning', finding.rule, finding.line, finding.message, finding.file);
  }
  // The poisoning scan of the body and the files it references (scan.ts): a blocking verdict is an error, so
  // validate fails; the skill is still listed (discovery reads only the head), and activation holds its body back.
  const scanOptions = {
    description: false,
    ...(options.scanBytes === undefined ? {} : { scanBytes: options.scanBytes }),
  };
  for (const issue of scanIssues(await scanSkill(skill, scanOptions)))
    add(issue.severity, issue.rule, issue.line, issue.message, issue.file);
  if (options.tools) {
    const { catalog, pins } = options.tools;
    const identity = skillPinIdentity(skill.dir);
    // The schemas were pinned with the approved SKILL.md: without an approved one there is nothing to compare.
    const pinned = pins && skill.name ? await pins.get(identity, 'skill', skill.name) : undefined;
    const findings = await checkSkillTools(
      {
        dir: skill.dir,
        file: skill.file,
        body,
        bodyLine,
        identity,
        ...(pinned?.sha256 ? { sha256: pinned.sha256 } : {}),
      },
      catalog,
      pins ? { pins } : {},
    );
    for (const finding of findings) add('warning', finding.rule, finding.line, finding.message, finding.file);
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
