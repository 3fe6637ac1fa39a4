import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSkill } from '../../src/skills/skill.js';
import { formatIssue, type SkillRule, validatePaths, validateSkill } from '../../src/skills/validate.js';
import { countTokens } from '../../src/tokens/count.js';
import { REPO } from '../helpers/project.js';

const REAL = join(REPO, 'examples', 'skills', 'anthropics');
const INVALID = join(REPO, 'test', 'fixtures', 'skills', 'invalid');

describe('validate: the eight real Anthropic skills', () => {
  it('are valid, and every warning is true of this copy: the files it names that were not copied, one long body', async () => {
    // No model: counted by the estimate (Qwen3 says 7,269 for the long body).
    const { skills, issues } = await validatePaths([REAL], { countTokens });
    expect(skills).toHaveLength(8);
    // Exactly these: the paths in their code blocks that are examples (evals/evals.json, a generated
    // eval-viewer/ script) are not references, and folders are not reference depth. Scripts, templates and
    // assets were not copied here (SOURCE.txt), so the references to them really are broken in this copy.
    expect(issues.map((i) => `${relative(REAL, i.file)}:${i.line}: ${i.severity}: ${i.message}`)).toEqual([
      'algorithmic-art/SKILL.md:390: warning: Referenced file does not exist: templates/viewer.html',
      'algorithmic-art/SKILL.md:396: warning: Referenced file does not exist: templates/generator_template.js',
      'skill-creator/SKILL.md:5: warning: Body is 7257 tokens (keep it under 5000; it is loaded whole at activation)',
      'skill-creator/SKILL.md:364: warning: Referenced file does not exist: assets/eval_review.html',
      'webapp-testing/SKILL.md:12: warning: Referenced file does not exist: scripts/with_server.py',
    ]);
  });

  it('no two of them overlap', async () => {
    const { issues } = await validatePaths([REAL]);
    expect(issues.filter((i) => i.rule === 'overlap')).toEqual([]);
  });
});

/** Each fixture folder under test/fixtures/skills/invalid breaks one rule; the expected message is skills-ref's. */
const CASES: Array<
  [folder: string, rule: SkillRule, severity: 'error' | 'warning', message: string | RegExp, line: number]
> = [
  ['frontmatter-missing', 'frontmatter', 'error', 'SKILL.md must start with YAML frontmatter (---)', 1],
  ['frontmatter-unclosed', 'frontmatter', 'error', 'SKILL.md frontmatter not properly closed with ---', 1],
  ['frontmatter-yaml', 'frontmatter', 'error', /^Invalid YAML in frontmatter: /, 3],
  ['frontmatter-mapping', 'frontmatter', 'error', 'SKILL.md frontmatter must be a YAML mapping', 2],
  [
    'unknown-field',
    'unknown-field',
    'warning',
    /^Unexpected fields in frontmatter: version\. Only \['allowed-tools'/,
    4,
  ],
  ['name-uppercase', 'name', 'error', "Skill name 'PDF' must be lowercase", 2],
  ['name-length', 'name', 'error', /exceeds 64 character limit \(70 chars\)$/, 2],
  ['name-hyphen', 'name', 'error', 'Skill name cannot start or end with a hyphen', 2],
  ['name-consecutive', 'name', 'error', 'Skill name cannot contain consecutive hyphens', 2],
  ['name-characters', 'name', 'error', /contains invalid characters/, 2],
  ['name-missing', 'name', 'error', 'Missing required field in frontmatter: name', 1],
  ['directory', 'directory', 'error', "Directory name 'template' must match skill name 'template-skill'", 2],
  ['description-missing', 'description', 'error', 'Missing required field in frontmatter: description', 1],
  ['description-length', 'description', 'error', 'Description exceeds 1024 character limit (1068 chars)', 3],
  [
    'compatibility-length',
    'compatibility',
    'error',
    'Compatibility exceeds 500 character limit (501 chars)',
    4,
  ],
  ['compatibility-type', 'compatibility', 'error', "Field 'compatibility' must be a string", 4],
  ['license-type', 'license', 'error', "Field 'license' must be a string", 4],
  [
    'metadata-type',
    'metadata',
    'error',
    "Field 'metadata' must be a mapping of string keys to string values",
    4,
  ],
  ['metadata-value', 'metadata', 'error', /^metadata\.version is a number, not a string/, 4],
  ['allowed-tools', 'allowed-tools', 'error', "Field 'allowed-tools' must be a space-separated string", 4],
  ['body-lines', 'body-size', 'warning', /^Body has 521 lines/, 5],
  ['body-tokens', 'body-size', 'warning', /^Body is \d+ tokens \(keep it under 5000/, 5],
  [
    'missing-reference',
    'missing-reference',
    'warning',
    'Referenced file does not exist: references/FORMS.md',
    7,
  ],
  [
    'reference-case',
    'reference-case',
    'warning',
    'Referenced file references/CONFLICTS.md not found; references/conflicts.md exists — names are case-sensitive on Linux: write references/conflicts.md',
    7,
  ],
  [
    'deep-reference',
    'deep-reference',
    'warning',
    /^references\/guide\.md refers on to a file SKILL\.md does not reference \(references\/details\.md\): keep file references one level deep from SKILL\.md/,
    3,
  ],
  ['when', 'when', 'warning', /^Description says what the skill does but not when to use it/, 3],
];

describe('validate: one failing fixture per rule', () => {
  it.each(CASES)('%s → %s', async (folder, rule, severity, message, line) => {
    const [skillDir] = readdirSync(join(INVALID, folder));
    const skill = await readSkill(join(INVALID, folder, skillDir!));
    const issues = await validateSkill(skill, { countTokens });
    // Exactly this one issue: a fixture that broke two rules would not prove which one fires.
    expect(issues.map((i) => [i.rule, i.severity, i.line])).toEqual([[rule, severity, line]]);
    if (typeof message === 'string') expect(issues[0]!.message).toBe(message);
    else expect(issues[0]!.message).toMatch(message);
    // The file the finding is in: SKILL.md, or for a reference chain the referenced file that goes on.
    const file = rule === 'deep-reference' ? join(skill.dir, 'references', 'guide.md') : skill.file;
    expect(formatIssue(issues[0]!)).toBe(`${file}:${line}: ${severity}: ${issues[0]!.message}`);
  });

  it('every rule has a fixture', () => {
    const rules: SkillRule[] = [
      'frontmatter',
      'unknown-field',
      'name',
      'directory',
      'description',
      'compatibility',
      'license',
      'metadata',
      'allowed-tools',
      'body-size',
      'missing-reference',
      'reference-case',
      'deep-reference',
      'when',
      'overlap',
    ];
    const covered = new Set<SkillRule>([...CASES.map((c) => c[1]), 'overlap']);
    expect(rules.filter((r) => !covered.has(r))).toEqual([]);
    // And every fixture folder is a case (overlap is checked across skills below).
    expect(readdirSync(INVALID).sort()).toEqual([...CASES.map((c) => c[0]), 'overlap'].sort());
  });

  it('unknown fields are errors under --strict', async () => {
    const skill = await readSkill(join(INVALID, 'unknown-field', 'unknown-field'));
    const issues = await validateSkill(skill, { strict: true });
    expect(issues.map((i) => [i.rule, i.severity])).toEqual([['unknown-field', 'error']]);
  });

  it('two paraphrased descriptions overlap; the fixtures that only share phrasing do not', async () => {
    const { issues } = await validatePaths([INVALID]);
    const overlap = issues.filter((i) => i.rule === 'overlap');
    expect(overlap).toHaveLength(1);
    expect(overlap[0]!.file).toMatch(/beta-report\/SKILL\.md$/);
    expect(overlap[0]!.message).toMatch(
      /^Description overlaps (8\d|9\d)% with .*alpha-report.*'alpha-report'/,
    );
  });
});

describe('validate: front matter parsing', () => {
  it('tolerates a BOM and CRLF line ends, and reports lines in the original file', async () => {
    const { parseSkill } = await import('../../src/skills/skill.js');
    const text =
      '\uFEFF---\r\nname: crlf\r\ndescription: Formats dates. Use when the user asks to format a date.\r\nlicense: 3\r\n---\r\n# Body\r\n';
    const skill = parseSkill('/tmp/crlf', text);
    expect(skill.name).toBe('crlf');
    const issues = await validateSkill(skill);
    expect(issues.map((i) => [i.rule, i.line])).toEqual([['license', 4]]);
  });

  it('a --- inside the body is not the end of the front matter', async () => {
    const { parseSkill } = await import('../../src/skills/skill.js');
    const skill = parseSkill(
      '/tmp/rule',
      '---\nname: rule\ndescription: "a --- b. Use when x."\n---\nText\n\n---\n\nMore\n',
    );
    expect(skill.description).toBe('a --- b. Use when x.');
    expect(skill.frontMatter.body).toContain('More');
  });

  it('finding references costs time in proportion to the body, whatever its one line holds', async () => {
    const { parseSkill } = await import('../../src/skills/skill.js');
    // 200 KB of "](" on one line: each one started a link whose target ran to the end of the line (31 s).
    const skill = parseSkill(
      '/tmp/links',
      `---\nname: links\ndescription: Links. Use when testing references.\n---\n${']('.repeat(100_000)}\nSee [the guide](references/GUIDE.md).\n`,
    );
    const started = performance.now();
    const issues = await validateSkill(skill);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(issues.map((i) => i.message)).toEqual(['Referenced file does not exist: references/GUIDE.md']);
  });

  it('a path that is neither a skill nor holds skills is a clear error', async () => {
    await expect(validatePaths([join(INVALID, 'nope')])).rejects.toThrow(/does not exist/);
    await expect(validatePaths([join(INVALID, 'when', 'when', 'SKILL.md')])).resolves.toMatchObject({
      skills: [expect.objectContaining({ name: 'when' })],
    });
  });
});

describe('discovery fast path for front matter', () => {
  it('gives what the YAML parser gives, and hands everything unusual to it', async () => {
    const { parseSkill } = await import('../../src/skills/skill.js');
    const { readFileSync } = await import('node:fs');
    const heads = readdirSync(REAL)
      .filter((d) => !d.includes('.'))
      .map((d) => readFileSync(join(REAL, d, 'SKILL.md'), 'utf8'));
    const tricky = [
      'description: Use this: for x',
      'description: ends with a colon:',
      'description: text # a comment',
      'description: "quoted: value"',
      "description: 'single'",
      'description: >\n  folded\n  text',
      'description: 1.0',
      'description: yes',
      'description: null',
      'description: ~',
      'description: 0x1F',
      'description: [a, b]',
      'description: &anchor value',
      'description: plain text, with commas - and dashes',
      'description: a\ndescription: b',
      'metadata:\n  author: me\ndescription: nested',
      '# comment\ndescription: after a comment',
      'description:    padded   ',
    ].map((yaml) => `---\nname: x\n${yaml}\n---\n# Body\n`);
    for (const text of [...heads, ...tricky]) {
      const slow = parseSkill('/s/x', text, { fastPath: false });
      const fast = parseSkill('/s/x', text);
      expect({ name: fast.name, description: fast.description, problems: fast.frontMatter.problems }).toEqual(
        {
          name: slow.name,
          description: slow.description,
          problems: slow.frontMatter.problems,
        },
      );
      expect(fast.frontMatter.data).toEqual(slow.frontMatter.data);
      expect([...fast.frontMatter.keyLines]).toEqual([...slow.frontMatter.keyLines]);
    }
  });
});
