import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DocsLibrary } from '../src/servers/docs/library.js';
import { mulberry32 } from './random.js';
import { collectGarbage, isMain, log, p50p99, round, tempDir } from './util.js';

/**
 * The docs server's index at scale: generate `documents` Markdown files (front matter, headings, prose drawn
 * from a fixed vocabulary with a Zipf-like skew, a code fence), index them with DocsLibrary.open, then run
 * `queries` searches of two or three words. Deterministic: the same seed gives the same corpus.
 */
export async function runDocs(options: { documents?: number; queries?: number } = {}) {
  const documents = options.documents ?? 10_000;
  const queries = options.queries ?? 1000;
  const tmp = tempDir('docs');
  try {
    const random = mulberry32(42);
    const vocabulary = Array.from({ length: 5000 }, (_, i) => word(i));
    const pick = () => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!;
    const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');
    log(`docs: writing ${documents} documents`);
    for (let i = 0; i < documents; i++) {
      const dir = join(tmp.dir, `section-${i % 50}`);
      if (i < 50) mkdirSync(dir, { recursive: true });
      const body = Array.from({ length: 6 }, () => sentence(40 + Math.floor(random() * 40))).join('\n\n');
      writeFileSync(
        join(dir, `doc-${i}.md`),
        `---\ntitle: "${sentence(4)}"\ndescription: ${sentence(12)}\n---\n# ${sentence(3)}\n\n${body}\n\n\`\`\`ts\nconst x = ${i};\n\`\`\`\n`,
      );
    }

    collectGarbage();
    const heapBefore = process.memoryUsage().heapUsed;
    const rssBefore = process.memoryUsage().rss;
    const started = performance.now();
    const library = await DocsLibrary.open(tmp.dir);
    const indexMs = performance.now() - started;
    collectGarbage();
    const heapAfter = process.memoryUsage().heapUsed;
    const rssAfter = process.memoryUsage().rss;

    const latencies: number[] = [];
    let hits = 0;
    for (let i = 0; i < queries; i++) {
      const query = sentence(2 + (i % 2));
      const t = performance.now();
      const results = library.search(query, 3);
      latencies.push(performance.now() - t);
      if (results.length > 0) hits++;
    }
    latencies.sort((a, b) => a - b);
    await library.close();
    return {
      description: `${documents} generated Markdown documents indexed with DocsLibrary.open (read, parse, BM25 index), then ${queries} searches of 2-3 words (k = 3), in process`,
      documents: library.size,
      indexMs: round(indexMs),
      heapMB: round((heapAfter - heapBefore) / 2 ** 20),
      rssGrowthMB: round((rssAfter - rssBefore) / 2 ** 20),
      search: {
        queries,
        withResults: hits,
        ...p50p99(latencies, 3),
      },
    };
  } finally {
    tmp.remove();
  }
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
