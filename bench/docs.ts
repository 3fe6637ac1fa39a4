import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mulberry32 } from './random.js';
import { folderBytes, isMain, log, median, p50p99, repoRoot, round, tempDir } from './util.js';

/** One process's figures (bench/fixtures/docs-process.ts). */
interface ProcessResult {
  documents: number;
  openMs: number;
  openCpuMs: number;
  firstSearchMs: number;
  searchMs: number[];
  withResults: number;
  rssStartMB: number;
  rssAfterOpenMB: number;
  heapAfterOpenMB: number;
  rssAfterSearchMB: number;
  cache?: { loaded: number; indexed: number; saved: boolean; problem?: string };
}

type Variant = 'minisearch' | 'no cache' | 'cold' | 'warm' | 'warm, 1 changed' | 'warm, 100 changed';
const VARIANTS: readonly Variant[] = [
  'minisearch',
  'no cache',
  'cold',
  'warm',
  'warm, 1 changed',
  'warm, 100 changed',
];

/**
 * The docs server's index at scale: `documents` generated Markdown files (front matter, headings, prose drawn
 * from a fixed vocabulary with a Zipf-like skew, a code fence; the same seed gives the same corpus), opened in a
 * fresh process per run (bench/fixtures/docs-process.ts; the page cache is warm, the process cold) and searched
 * `queries` times (2-3 words, k = 3). Variants, in turn in every round: the anchor (plain MiniSearch over the
 * same files, as the library was before), DocsLibrary without an index cache, with an empty cache (cold: it
 * indexes and writes the cache), with the cache of that cold run (warm), and warm after 1 and after 100 files
 * changed. Medians of `rounds`; search percentiles pool every round's searches.
 */
export async function runDocs(options: { documents?: number; queries?: number; rounds?: number } = {}) {
  const documents = options.documents ?? 10_000;
  const queries = options.queries ?? 1000;
  const rounds = options.rounds ?? 3;
  const tmp = tempDir('docs');
  try {
    log(`docs: writing ${documents} documents`);
    const folder = join(tmp.dir, 'docs');
    const sentence = writeCorpus(folder, documents);
    const queriesFile = join(tmp.dir, 'queries.json');
    writeFileSync(
      queriesFile,
      JSON.stringify(Array.from({ length: queries }, (_, i) => sentence(2 + (i % 2)))),
    );
    const run = (mode: 'tack' | 'minisearch', cacheDir?: string): ProcessResult =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            join(repoRoot, 'dist/bench/fixtures/docs-process.js'),
            mode,
            folder,
            queriesFile,
            ...(cacheDir ? [cacheDir] : []),
          ],
          { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
        ),
      ) as ProcessResult;
    const changeFiles = (count: number) => {
      for (let i = 0; i < count; i++) {
        const n = (i * 97) % documents;
        appendFileSync(join(folder, `section-${n % 50}`, `doc-${n}.md`), `\nEdited ${i}.\n`);
      }
    };
    const results = new Map<Variant, ProcessResult[]>(VARIANTS.map((v) => [v, []]));
    let cacheBytes = 0;
    for (let round = 0; round < rounds; round++) {
      const cacheDir = join(tmp.dir, `state-${round}`);
      for (const variant of VARIANTS) {
        log(`docs: round ${round + 1}/${rounds}, ${variant}`);
        if (variant === 'warm, 1 changed') changeFiles(1);
        if (variant === 'warm, 100 changed') changeFiles(100);
        results
          .get(variant)!
          .push(
            variant === 'minisearch'
              ? run('minisearch')
              : run('tack', variant === 'no cache' ? undefined : cacheDir),
          );
        if (variant === 'cold') cacheBytes = folderBytes(cacheDir);
      }
      rmSync(cacheDir, { recursive: true, force: true });
    }
    const summary = (rows: ProcessResult[]) => {
      const med = (key: keyof ProcessResult) => round(median(rows.map((r) => r[key] as number)));
      const latencies = rows.flatMap((r) => r.searchMs).sort((a, b) => a - b);
      return {
        documents: rows[0]!.documents,
        openMs: med('openMs'),
        openMsRuns: rows.map((r) => round(r.openMs)),
        openCpuMs: med('openCpuMs'),
        firstSearchMs: med('firstSearchMs'),
        search: { queries: latencies.length, withResults: rows[0]!.withResults, ...p50p99(latencies, 3) },
        rssStartMB: med('rssStartMB'),
        rssAfterOpenMB: med('rssAfterOpenMB'),
        heapAfterOpenMB: med('heapAfterOpenMB'),
        rssAfterSearchMB: med('rssAfterSearchMB'),
        ...(rows[0]!.cache ? { cache: rows[0]!.cache } : {}),
      };
    };
    return {
      description: `${documents} generated Markdown documents (${round(folderBytes(folder) / 2 ** 20)} MB), each variant in a fresh process per run (page cache warm), ${rounds} rounds of every variant in turn, medians; open = walk, read, parse and index (or load the index); then ${queries} searches of 2-3 words (k = 3); RSS and heap after a forced GC. The anchor is plain MiniSearch over the same files, read and parsed the same way`,
      cacheFileMB: round(cacheBytes / 2 ** 20),
      variants: Object.fromEntries(VARIANTS.map((v) => [v, summary(results.get(v)!)])),
    };
  } finally {
    tmp.remove();
  }
}

/**
 * Writes `documents` generated Markdown files into `dir` (50 sections); returns the sentence generator that
 * continues the same seeded stream, for queries drawn from the same vocabulary.
 */
export function writeCorpus(dir: string, documents: number): (n: number) => string {
  const random = mulberry32(42);
  const vocabulary = Array.from({ length: 5000 }, (_, i) => word(i));
  const pick = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!;
  const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');
  for (let i = 0; i < documents; i++) {
    const section = join(dir, `section-${i % 50}`);
    if (i < 50) mkdirSync(section, { recursive: true });
    const body = Array.from({ length: 6 }, () => sentence(40 + Math.floor(random() * 40))).join('\n\n');
    writeFileSync(
      join(section, `doc-${i}.md`),
      `---\ntitle: "${sentence(4)}"\ndescription: ${sentence(12)}\n---\n# ${sentence(3)}\n\n${body}\n\n\`\`\`ts\nconst x = ${i};\n\`\`\`\n`,
    );
  }

  return sentence;
}

/** Pronounceable made-up words: w0 = "ba", w1 = "be", ... */
function word(i: number): string {
  const syllables = [
    'ba',
    'be',
    'bi',
    'bo',
    'ka',
    'ke',
    'ki',
    'ko',
    'ma',
    'me',
    'mi',
    'mo',
    'ra',
    're',
    'ri',
    'ro',
    'ta',
    'te',
    'ti',
    'to',
  ];
  let n = i;
  let out = '';
  do {
    out += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  } while (n > 0);
  return out;
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runDocs(), null, 2)}\n`);
}
