import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConcept } from '../../src/knowledge/concept.js';
import { parseDoc } from '../../src/servers/docs/corpus.js';
import { parseSkill } from '../../src/skills/skill.js';
import { validateSkill } from '../../src/skills/validate.js';
import { plainYaml, readFrontMatter } from '../../src/util/front-matter.js';

/**
 * Every front matter reader (skills, knowledge, docs) on text assembled from the pieces YAML attacks are made
 * of: anchors and aliases, flow brackets, quotes, block scalars, tabs, BOMs, CRs, `---` lines. Property: a
 * result with problems (line >= 1), never an exception; and where the fast path answers, it answers as the
 * `yaml` package does. Seeded, bounded in runs.
 */
const RUNS = { seed: 1314, numRuns: 250 };

const piece = fc.oneof(
  fc.constantFrom(
    'name: x',
    'description: a tool',
    'type: Metric',
    'key:',
    '  - item',
    '- item',
    '  nested: v',
    'a: &a [x, x, x, x, x, x, x, x, x]',
    'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
    'c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
    'x: &x [lol, lol, lol, lol, lol, lol, lol, lol, lol]\ny: &y [*x, *x, *x, *x, *x, *x, *x, *x, *x]\nz: [*y, *y, *y, *y, *y, *y, *y, *y, *y]',
    'd: *missing',
    'e: [',
    'f: {a: 1, b: [2, 3]}',
    'g: "quoted \\" escape"',
    "h: 'single ''quote'''",
    'i: |',
    '  block',
    'j: >-',
    'k: !!binary aGVsbG8=',
    'l: 2026-01-01',
    'm: 0x1F',
    'n: ~',
    '__proto__: polluted',
    'o: # comment',
    '\t- tab',
    '\uFEFF',
    '---',
    '...',
    '',
    ': no key',
    '? complex key',
  ),
  fc.string({ maxLength: 40 }),
  fc.integer({ min: 1, max: 3_000 }).map((n) => `deep: ${'['.repeat(n)}${']'.repeat(n)}`),
  fc.integer({ min: 1, max: 2_000 }).map((n) => `long: ${'a, '.repeat(n)}b`),
);

const file = fc
  .tuple(
    fc.constantFrom('---\n', '\uFEFF---\n', '---\r\n', '', '--- \n'),
    fc.array(piece, { maxLength: 14 }),
    fc.constantFrom('\n---\n', '\r\n---\r\n', '\n', '\n---'),
    fc.string({ maxLength: 60 }),
  )
  .map(([open, lines, close, body]) => `${open}${lines.join('\n')}${close}${body}`);

describe('front matter fuzz', () => {
  it('readFrontMatter never throws; problems carry a line; the fast path agrees with yaml', () => {
    fc.assert(
      fc.property(file, (text) => {
        const fast = readFrontMatter(text);
        const slow = readFrontMatter(text, { fastPath: false });
        for (const problem of [...fast.problems, ...slow.problems])
          expect(problem.line).toBeGreaterThanOrEqual(1);
        if (plainYaml(text)) expect(fast).toEqual(slow);
      }),
      RUNS,
    );
  });

  it('skills, concepts and docs built on it never throw', async () => {
    await fc.assert(
      fc.asyncProperty(file, async (text) => {
        const skill = parseSkill('/skills/x', text);
        const issues = await validateSkill(skill);
        for (const issue of issues) expect(issue.line).toBeGreaterThanOrEqual(1);
        const concept = parseConcept('concepts/x.md', text);
        expect(concept).toBeDefined();
        const doc = parseDoc('x', '/docs/x.md', text);
        expect(typeof doc.title).toBe('string');
      }),
      { ...RUNS, numRuns: 120 },
    );
  });
});
