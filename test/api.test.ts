import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiFileOf, apiProgram, apiReports, ENTRIES, exportedNames } from '../scripts/api-report.js';
import { REPO } from './helpers/project.js';

// One program for every check: building it is most of this file's time.
const program = apiProgram();

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name), keep)
      : keep(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

/**
 * Where a library user reads about a name: the README, the Markdown under docs/, and the example programs (type-checked
 * with the rest of the repository, so what they show compiles). The skills and bundles under examples/ are data,
 * not documentation of the API: only examples/**\/*.ts counts.
 */
const DOCUMENTATION = [
  join(REPO, 'README.md'),
  ...filesUnder(join(REPO, 'docs'), (name) => name.endsWith('.md')),
  ...filesUnder(join(REPO, 'examples'), (name) => name.endsWith('.ts')),
];

describe('the public API', () => {
  it('matches the committed listing of every entry (api/*.api.txt): run `npm run api` after an intended change', () => {
    const reports = apiReports(program);
    expect(Object.keys(reports).sort()).toEqual(Object.keys(ENTRIES).sort());
    for (const [entry, report] of Object.entries(reports)) {
      const committed = readFileSync(apiFileOf(entry), 'utf8');
      expect(report, `${entry}: the API differs from ${relative(REPO, apiFileOf(entry))}`).toBe(committed);
    }
  });

  it('leaves internals out of every entry', () => {
    const reports = Object.values(apiReports(program)).join('\n');
    for (const internal of [
      'openDatabase',
      'bindParameters',
      'canonicalSql',
      'decodeTags',
      'PinRecords',
      'bwrapArgs',
      'SqliteStore',
      'HARNESS_RULES',
      'judgeCall',
    ])
      expect(reports).not.toMatch(new RegExp(`^(class|function|const|interface|type) ${internal}\\b`, 'm'));
  });

  it('is the same in package.json: one export per entry, to the module the listing reads', () => {
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string } | string>;
    };
    const exported = Object.entries(pkg.exports)
      .filter(([path]) => path !== './package.json')
      .map(([path, target]) => [
        path === '.' ? 'tack' : `tack/${path.slice(2)}`,
        typeof target === 'string' ? target : target.default,
      ]);
    expect(Object.fromEntries(exported)).toEqual(
      Object.fromEntries(
        Object.entries(ENTRIES).map(([entry, file]) => [entry, `./dist/${file.replace(/\.ts$/, '.js')}`]),
      ),
    );
  });

  it('documents every exported name in the README, docs/ or an example (examples/**/*.ts)', () => {
    const text = DOCUMENTATION.map((file) => readFileSync(file, 'utf8')).join('\n');
    const words = new Set(text.match(/[A-Za-z_$][\w$]*/g));
    const undocumented = Object.entries(exportedNames(program)).flatMap(([entry, names]) =>
      names.filter((name) => !words.has(name)).map((name) => `${entry}: ${name}`),
    );
    expect(undocumented, 'mention each in docs/library.md (with an example) or use it in examples/').toEqual(
      [],
    );
  });
});
