import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../bench/random.js';
import { plainYaml, readFrontMatter } from '../../src/util/front-matter.js';
import { REPO } from '../helpers/project.js';

/** What the `yaml` package makes of it, in the shape plainYaml answers with. */
function reference(text: string) {
  const fm = readFrontMatter(text, { fastPath: false });
  return {
    data: fm.data,
    body: fm.body,
    bodyLine: fm.bodyLine,
    keyLines: [...fm.keyLines],
    problems: fm.problems,
  };
}

/** plainYaml's answer, or undefined when it leaves the text to the parser; throws when it differs from it. */
function checked(text: string) {
  const fast = plainYaml(text);
  if (!fast) return undefined;
  const shown = { ...fast, keyLines: [...fast.keyLines] };
  const { present: _present, ...rest } = shown;
  expect(rest, text).toStrictEqual(reference(text));
  return fast;
}

function* markdownFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* markdownFiles(path);
    else if (entry.endsWith('.md')) yield path;
  }
}

describe('plainYaml, the front matter fast path', () => {
  it('reads every fixture it takes exactly as the yaml package does, and takes most of them', () => {
    let taken = 0;
    let total = 0;
    for (const file of markdownFiles(join(REPO, 'test', 'fixtures'))) {
      const text = readFileSync(file, 'utf8');
      if (!text.startsWith('---')) continue;
      total++;
      if (checked(text)) taken++;
    }
    expect(total).toBeGreaterThan(50);
    expect(taken / total).toBeGreaterThan(0.6);
  });

  it('takes the shapes OKF writes, typed as the core schema types them', () => {
    const text = [
      '---',
      'type: Attested Computation',
      'title: "Revenue: a year"',
      'description: \'It says "so"\'',
      'tags: [finance, revenue, 2026-q1]',
      'generated: { by: reference_agent/gemini-2.5-pro, at: 2026-06-20T22:53:05Z }',
      'verified:',
      '  - { by: human:ana, at: 2026-06-25 }',
      '  - by: process:nightly',
      '    at: 2026-06-26T02:00:00Z',
      'stale_after: 2026-09-23T00:00:00Z',
      'parameters:',
      '- { name: year, type: integer, required: true }',
      'executor:',
      '  resource: references/skills/run-on-bq.md',
      '  receipt: [job_id, executed_sql, result]',
      'sources:',
      '  - id: src',
      '    resource: all queries in BigQuery project x',
      '    usage_count: 5000',
      '',
      'empty: []',
      'x_custom: { keep: a b, n: 0 }',
      '---',
      '# Body',
    ].join('\n');
    const fast = checked(text);
    expect(fast?.data).toMatchObject({
      verified: [{ by: 'human:ana', at: '2026-06-25' }, { by: 'process:nightly' }],
      parameters: [{ name: 'year', type: 'integer', required: true }],
      sources: [{ usage_count: 5000 }],
    });
    expect(fast?.keyLines.get('sources')).toBe(17);
  });

  it('leaves everything else to the parser', () => {
    const cases = [
      'a: b # comment',
      '# comment\na: b',
      'a: &x b',
      'a: *x',
      'a: !!str 1',
      'a: |\n  text',
      'a: >\n  text',
      'a: long\n  continued',
      'a: "esc\\"aped"',
      "a: 'it''s'",
      'a: null',
      'a: ~',
      'a: True',
      'a: 1.5',
      'a: -1',
      'a: 0x1F',
      'a: 007',
      'a: 12345678901234567',
      'a: yes',
      'a: b: c',
      'a: b:',
      'a: [b: c]',
      'a: [b:, c]',
      'a: [[b]]',
      'a: [b, ]',
      'a: { b: [c] }',
      'a: {b:c}',
      'a: { "b": c }',
      'a: b\na: c',
      '"a": b',
      'a:\n  b:\n    c: d',
      'a:\n  - b\n\n  - c',
      'a:\n  - b: c\n      d: e',
      'a:\n  -   b: c',
      'a:',
      'a: \tb',
      'a: b\tc',
      '__proto__: x',
      'a: [b\n  , c]',
      'a: "b',
      '...',
      '%YAML 1.2',
      'a: @b',
      'a: `b`',
      'a: %b',
    ];
    for (const yaml of cases) expect(plainYaml(`---\n${yaml}\n---\n`), yaml).toBeUndefined();
  });

  it('agrees with the yaml package on thousands of generated front matter blocks', () => {
    // Seeded, so a failure names an input that fails again.
    const next = mulberry32(20261130);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const scalars = [
      'plain',
      'two words',
      'a:b',
      'http://x.y/z?q=1#f',
      'a,b',
      'a]',
      'a}',
      'a#b',
      'a #b',
      '1',
      '0',
      '42',
      '-1',
      '1.5',
      '1e3',
      '0o7',
      '.inf',
      'true',
      'false',
      'True',
      'null',
      '~',
      'yes',
      'No',
      '2026-09-01',
      '2026-09-01T00:00:00Z',
      '"quoted"',
      '"with: colon, and # hash"',
      "'single'",
      '"esc\\n"',
      "'it''s'",
      '""',
      "''",
      '-dash',
      '- dash',
      ':colon',
      '?q',
      '[a, b]',
      '[]',
      '[a,b , "c"]',
      '[a, [b]]',
      '{ a: b }',
      '{}',
      '{ a: b, c: 1 }',
      '{a: b}',
      '{ a: [b] }',
      'a: b',
      'a:',
      '&anchor x',
      '*alias',
      '!tag x',
      '|',
      '@at',
    ];
    const keys = ['type', 'title', 'a', 'b-c', 'd_e', 'tags', 'type'];
    let taken = 0;
    for (let n = 0; n < 4000; n++) {
      const lines: string[] = [];
      const count = 1 + Math.floor(next() * 5);
      for (let k = 0; k < count; k++) {
        const key = pick(keys);
        const shape = next();
        const some = (f: () => string) =>
          Array.from({ length: Math.floor(next() * 4) }, f).join(pick([', ', ',', ' , ']));
        if (shape < 0.4) lines.push(`${key}: ${pick(scalars)}${next() < 0.1 ? '  ' : ''}`);
        else if (shape < 0.5) lines.push(`${key}: [${some(() => pick(scalars))}]`);
        else if (shape < 0.6) lines.push(`${key}: {${some(() => `${pick(keys)}: ${pick(scalars)}`)}}`);
        else if (shape < 0.75) {
          lines.push(`${key}:`);
          const indent = ' '.repeat(pick([0, 2, 2, 4]));
          for (let i = 0; i < 1 + Math.floor(next() * 3); i++) lines.push(`${indent}- ${pick(scalars)}`);
        } else if (shape < 0.9) {
          lines.push(`${key}:`);
          const indent = ' '.repeat(pick([2, 2, 4]));
          for (let i = 0; i < 1 + Math.floor(next() * 3); i++) {
            lines.push(`${indent}- ${pick(keys)}: ${pick(scalars)}`);
            if (next() < 0.5) lines.push(`${indent}  ${pick(keys)}: ${pick(scalars)}`);
          }
        } else {
          lines.push(`${key}:`);
          for (let i = 0; i < 1 + Math.floor(next() * 3); i++)
            lines.push(`  ${pick(keys)}: ${pick(scalars)}`);
        }
        if (next() < 0.05) lines.push('');
      }
      if (checked(`---\n${lines.join('\n')}\n---\nbody [x](y.md)\n`)) taken++;
    }
    // Enough of them are taken for the comparison to mean something.
    expect(taken).toBeGreaterThan(300);
  });

  it('stays linear on long lines', () => {
    const texts = (n: number) => [
      `a: x${' '.repeat(n * 2)}y`,
      `a: [${'b, '.repeat(n)}c]`,
      `a: {${Array.from({ length: n / 2 }, (_, i) => ` k${i}: c,`).join('')} d: e}`,
      `a:\n${'  - x\n'.repeat(n / 2)}`,
    ];
    for (const text of texts(100)) expect(checked(`---\n${text}\n---\n`), text).toBeDefined();
    // A `.*?` in the key pattern made the first of these quadratic (minutes at this size): a regression runs
    // past the test's timeout. No time bound here: timing belongs in bench/.
    for (const text of texts(100_000)) expect(plainYaml(`---\n${text}\n---\n`)).toBeDefined();
  });

  it('is what readFrontMatter answers with when it applies', () => {
    const text = '---\ntype: T\ntags: [a]\n---\nbody\n';
    expect(readFrontMatter(text)).toEqual(plainYaml(text));
    expect(readFrontMatter('---\ntype: T # c\n---\n').data).toEqual({ type: 'T' });
  });
});
