import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import MiniSearch from 'minisearch';
import { type KnowledgeBundle, loadBundle } from '../src/knowledge/bundle.js';
import { planIndexes } from '../src/knowledge/index-file.js';
import { KnowledgeBase } from '../src/knowledge/knowledge.js';
import { mulberry32 } from './random.js';

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
 * OKF knowledge at scale: a generated bundle of `concepts` concepts in folders of 100 (each with an index.md),
 * shaped like agent-written bundles (mixed types, provenance, trust, lifecycle, bare dates and datetimes,
 * 1-3 KB bodies linking to other concepts). Each run is a fresh Node process (this same file with `--cold`, so
 * the JavaScript heap is cold while the page cache is warm) that loads and validates the bundle, searches once
 * (the first search builds the index when loading did not), runs `queries` more searches and plans every
 * index.md. Variants, in turn in every round: the anchor (MiniSearch built on the first search, as the knowledge
 * base did before), no cache, an empty cache (cold: it is written), the cache of that cold run (warm), and warm
 * after 1 and after 100 concept files changed. Medians of `rounds`; search percentiles pool all rounds.
 */
export async function runKnowledge(options: { concepts?: number; rounds?: number; queries?: number } = {}) {
  // Imported here, not at the top: util.ts pulls in the MCP SDK, which would inflate the cold process's RSS.
  const { folderBytes, log, median, p50p99, repoRoot, round, tempDir } = await import('./util.js');
  const count = options.concepts ?? 10_000;
  const rounds = options.rounds ?? 3;
  const queries = options.queries ?? 200;
  const tmp = tempDir('knowledge');
  try {
    log(`knowledge: writing ${count} concepts`);
    const bundle = join(tmp.dir, 'kb');
    mkdirSync(bundle);
    const written = writeBundle(bundle, count);
    const run = (variant: Variant, cacheDir: string): ColdResult =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [
            '--expose-gc',
            join(repoRoot, 'dist/bench/knowledge.js'),
            '--cold',
            bundle,
            String(queries),
            variant === 'minisearch' ? 'minisearch' : 'tack',
            ...(variant === 'minisearch' || variant === 'no cache' ? [] : [cacheDir]),
          ],
          { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 },
        ),
      ) as ColdResult;
    // Edits as an agent makes them: a line appended to a concept's body.
    const files = readdirSync(bundle, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md') && !f.endsWith('index.md'))
      .sort();
    const change = (n: number) => {
      for (let i = 0; i < n; i++)
        appendFileSync(join(bundle, files[(i * 97) % files.length]!), `\nEdited ${i}.\n`);
    };
    const results = new Map<Variant, ColdResult[]>(VARIANTS.map((v) => [v, []]));
    let cacheBytes = 0;
    for (let r = 0; r < rounds; r++) {
      const cacheDir = join(tmp.dir, `state-${r}`);
      for (const variant of VARIANTS) {
        log(`knowledge: round ${r + 1}/${rounds}, ${variant}`);
        if (variant === 'warm, 1 changed') change(1);
        if (variant === 'warm, 100 changed') change(100);
        results.get(variant)!.push(run(variant, cacheDir));
        if (variant === 'cold') cacheBytes = folderBytes(cacheDir);
      }
      rmSync(cacheDir, { recursive: true, force: true });
    }
    const summary = (rows: ColdResult[]) => {
      const med = (key: keyof ColdResult) => round(median(rows.map((x) => x[key] as number)));
      const latencies = rows.flatMap((x) => x.searchMs).sort((a, b) => a - b);
      return {
        loadMs: med('loadMs'),
        firstSearchMs: med('indexMs'),
        loadPlusFirstSearchMs: round(median(rows.map((x) => x.loadMs + x.indexMs))),
        loadPlusFirstSearchRunsMs: rows.map((x) => round(x.loadMs + x.indexMs)),
        loadPlusFirstSearchCpuMs: round(median(rows.map((x) => x.cpuMs))),
        renderIndexesMs: med('renderIndexesMs'),
        search: { queries: latencies.length, ...p50p99(latencies, 2) },
        rssStartMB: med('rssStartMB'),
        rssAfterLoadMB: med('rssAfterLoadMB'),
        rssAfterIndexMB: med('rssAfterIndexMB'),
        heapAfterLoadMB: med('heapAfterLoadMB'),
        heapAfterIndexMB: med('heapAfterIndexMB'),
        ...(rows[0]!.cache ? { cache: rows[0]!.cache } : {}),
      };
    };
    const first = results.get('no cache')![0]!;
    return {
      description: `${count} generated OKF concepts (${written.folders} folders of ~100, each with index.md; ${round(written.bytes / 2 ** 20)} MB of Markdown), each variant in a fresh process per run (page cache warm), ${rounds} rounds of every variant in turn, medians; load includes validation (issues are computed while loading); the first search builds the index unless loading did (with a cache); then ${queries - 1} more searches (k = 5) of 2-3 words taken from concept titles and descriptions`,
      concepts: first.concepts,
      folders: written.folders,
      bundleMB: round(written.bytes / 2 ** 20),
      issues: { errors: first.errors, warnings: first.warnings },
      withResults: first.withResults,
      sourceInTop5: first.sourceInTop5,
      indexFiles: first.indexFiles,
      cacheFileMB: round(cacheBytes / 2 ** 20),
      variants: Object.fromEntries(VARIANTS.map((v) => [v, summary(results.get(v)!)])),
    };
  } finally {
    tmp.remove();
  }
}

interface ColdResult {
  concepts: number;
  errors: number;
  warnings: number;
  loadMs: number;
  indexMs: number;
  /** CPU (user + system) of load and first search: a figure less moved by other work on the machine. */
  cpuMs: number;
  renderIndexesMs: number;
  indexFiles: number;
  rssStartMB: number;
  rssAfterLoadMB: number;
  rssAfterIndexMB: number;
  heapAfterLoadMB: number;
  heapAfterIndexMB: number;
  /** Every search after the first (the first may build the index). */
  searchMs: number[];
  withResults: number;
  /** Searches whose concept the words were taken from came back in the top 5: a sanity check of ranking. */
  sourceInTop5: number;
  cache?: unknown;
}

/** One measurement; runs in the child process and prints one JSON line. */
async function coldRun(
  dir: string,
  queryCount: number,
  mode: string,
  cacheDir?: string,
): Promise<ColdResult> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const mb = (bytes: number) => bytes / 2 ** 20;
  const cpu = () => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  };
  gc();
  const rssStartMB = mb(process.memoryUsage().rss);
  const cpuStart = cpu();
  let started = performance.now();
  const bundle = await loadBundle(dir, cacheDir ? { cacheDir } : {});
  const loadMs = performance.now() - started;
  const cpuLoaded = cpu();
  gc();
  const afterLoad = process.memoryUsage();

  const all = [...bundle.concepts.values()];
  const picked = Array.from({ length: queryCount }, (_, i) => all[(i * 7919) % all.length]!);
  const queries = picked.map((c, i) => queryFor(c.title, c.description ?? '', i));
  const base = new KnowledgeBase([bundle]);
  const find = mode === 'minisearch' ? miniSearchOf(bundle) : (q: string) => base.search(q);
  // CPU of the load and the first search, without the forced GC between them.
  const cpuSearch = cpu();
  started = performance.now();
  const firstHits = find(queries[0]!);
  const indexMs = performance.now() - started;
  const cpuMs = cpuLoaded - cpuStart + (cpu() - cpuSearch);
  gc();
  const afterIndex = process.memoryUsage();

  const searchMs: number[] = [];
  let withResults = firstHits.length > 0 ? 1 : 0;
  let sourceInTop5 = firstHits.some((h) => h.id === picked[0]!.id) ? 1 : 0;
  for (let i = 1; i < queries.length; i++) {
    const t = performance.now();
    const hits = find(queries[i]!);
    searchMs.push(performance.now() - t);
    if (hits.length > 0) withResults++;
    if (hits.some((h) => h.id === picked[i]!.id)) sourceInTop5++;
  }

  started = performance.now();
  // What `tack knowledge index` computes: every index.md as the generator would leave it (read, merged).
  const indexes = (await planIndexes(bundle)).files;
  const renderIndexesMs = performance.now() - started;
  return {
    concepts: bundle.concepts.size,
    errors: bundle.errors,
    warnings: bundle.issues.length - bundle.errors,
    loadMs,
    indexMs,
    cpuMs,
    renderIndexesMs,
    indexFiles: indexes.length,
    rssStartMB,
    rssAfterLoadMB: mb(afterLoad.rss),
    rssAfterIndexMB: mb(afterIndex.rss),
    heapAfterLoadMB: mb(afterLoad.heapUsed),
    heapAfterIndexMB: mb(afterIndex.heapUsed),
    searchMs,
    withResults,
    sourceInTop5,
    ...(bundle.cache ? { cache: bundle.cache } : {}),
  };
}

/**
 * The anchor: search as the knowledge base did before it had its own index, a MiniSearch index over the same
 * fields with the same boosts, built on the first search; each search sorts every match and keeps the first 5.
 */
function miniSearchOf(bundle: KnowledgeBundle): (query: string) => Array<{ id: string }> {
  let index:
    | MiniSearch<{ id: string; title: string; description: string; tags: string; body: string }>
    | undefined;
  return (query) => {
    if (!index) {
      index = new MiniSearch({
        fields: ['title', 'description', 'tags', 'body'],
        searchOptions: { boost: { title: 3, description: 2, tags: 2 }, combineWith: 'OR', prefix: false },
      });
      index.addAll(
        [...bundle.concepts.values()].map((c) => ({
          id: c.id,
          title: `${c.title} ${c.id.replace(/[/_-]+/g, ' ')}`,
          description: c.description ?? '',
          tags: c.tags.join(' '),
          body: c.body,
        })),
      );
    }
    return index
      .search(query)
      .slice(0, 5)
      .map((hit) => ({ id: String(hit.id) }));
  };
}

/**
 * A query a person might type about a concept, not a string copied from it: two title words in another order
 * and lower case, plus a description word the title lacks.
 */
function queryFor(title: string, description: string, i: number): string {
  const words = (text: string): string[] => text.toLowerCase().match(/[a-z]{3,}/g) ?? [];
  const fromTitle = words(title);
  const extra = words(description).filter((w) => !fromTitle.includes(w) && !STOP.has(w));
  const picked = fromTitle
    .filter((w) => !STOP.has(w))
    .slice(0, 2)
    .reverse();
  if (extra.length > 0 && i % 3 !== 0) picked.push(extra[i % extra.length]!);
  return picked.join(' ') || title;
}

const STOP = new Set(['the', 'and', 'for', 'per', 'with', 'from', 'each', 'that', 'this', 'table', 'get']);

// ---------------------------------------------------------------------------------------------------------
// The generated bundle

const DOMAINS = [
  'finance',
  'sales',
  'marketing',
  'logistics',
  'support',
  'product',
  'growth',
  'billing',
  'inventory',
  'security',
];
const NOUNS = [
  'orders',
  'customers',
  'revenue',
  'refunds',
  'invoices',
  'shipments',
  'sessions',
  'campaigns',
  'subscriptions',
  'payments',
  'returns',
  'carts',
  'products',
  'suppliers',
  'warehouses',
  'tickets',
  'accounts',
  'churn',
  'margin',
  'discounts',
  'coupons',
  'leads',
  'trials',
  'renewals',
  'chargebacks',
  'deliveries',
  'stock',
  'forecasts',
  'budgets',
  'ledger',
  'vendors',
  'contracts',
  'incidents',
  'alerts',
  'pipelines',
  'events',
  'clicks',
  'impressions',
  'signups',
  'cohorts',
];
const ADJECTIVES = [
  'daily',
  'weekly',
  'monthly',
  'quarterly',
  'regional',
  'global',
  'net',
  'gross',
  'active',
  'recurring',
  'pending',
  'late',
  'refunded',
  'enterprise',
  'retail',
  'wholesale',
  'mobile',
  'organic',
  'paid',
  'domestic',
];
const MEASURES = ['rate', 'count', 'ratio', 'latency', 'total', 'average', 'share', 'backlog'];
const FILLER =
  'the a of to in is for on that by with as from at are be this which or it an was not when each per after before only all any every its into than then over under within between across'.split(
    ' ',
  );
const TYPES: Array<[string, number]> = [
  ['BigQuery Table', 25],
  ['Metric', 20],
  ['Reference', 12],
  ['Playbook', 10],
  ['API Endpoint', 10],
  ['Policy', 8],
  ['Dataset', 10],
  ['Attested Computation', 5],
];

interface Planned {
  folder: string;
  slug: string;
  type: string;
  title: string;
  description: string;
}

/** Writes the bundle; returns how many folders and bytes. Deterministic: a seeded PRNG. */
export function writeBundle(root: string, count: number): { folders: number; bytes: number } {
  const random = mulberry32(7);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const chance = (p: number) => random() < p;
  const folderCount = Math.max(1, Math.ceil(count / 100));
  const folders = Array.from(
    { length: folderCount },
    (_, i) => `${DOMAINS[i % DOMAINS.length]}-${String(Math.floor(i / DOMAINS.length)).padStart(2, '0')}`,
  );
  const totalWeight = TYPES.reduce((n, [, w]) => n + w, 0);
  const typeOf = () => {
    let r = random() * totalWeight;
    for (const [type, weight] of TYPES) {
      r -= weight;
      if (r < 0) return type;
    }
    return TYPES[0]![0];
  };
  const plan: Planned[] = [];
  for (let i = 0; i < count; i++) {
    const folder = folders[i % folderCount]!;
    const type = typeOf();
    const [adj, noun, noun2] = [pick(ADJECTIVES), pick(NOUNS), pick(NOUNS)];
    const title =
      type === 'BigQuery Table'
        ? `${cap(adj)} ${noun} by ${noun2}`
        : type === 'Metric'
          ? `${cap(adj)} ${noun} ${pick(MEASURES)}`
          : type === 'Playbook'
            ? `Incident response: ${adj} ${noun} alert`
            : type === 'API Endpoint'
              ? `GET /v2/${noun}/{id}/${noun2}`
              : type === 'Attested Computation'
                ? `${cap(adj)} ${noun} for a period`
                : `${cap(noun)} and ${noun2}: ${adj} ${type.toLowerCase()}`;
    const description = `${cap(pick(['tracks', 'defines', 'explains', 'lists', 'computes', 'describes']))} ${adj} ${noun} ${pick(['per', 'across', 'by'])} ${noun2} for the ${folder.split('-')[0]} team, ${sentence(random, 6 + Math.floor(random() * 10))}.`;
    const slug = `${title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')}-${i}`;
    plan.push({ folder, slug, type, title, description });
  }
  const pathOf = (p: Planned) => `${p.folder}/${p.slug}.md`;
  const playbooks = plan.filter((p) => p.type === 'Playbook');

  mkdirSync(join(root, 'references'), { recursive: true });
  writeFileSync(join(root, 'references', 'sql-equality.py'), 'def attest(receipt):\n    return True\n');
  let bytes = 0;
  for (const folder of folders) mkdirSync(join(root, folder), { recursive: true });
  plan.forEach((p, i) => {
    const lines = [
      '---',
      `type: ${p.type}`,
      `title: ${JSON.stringify(p.title)}`,
      `description: ${JSON.stringify(p.description)}`,
    ];
    lines.push(
      `tags: [${[...new Set([p.folder.split('-')[0]!, pick(NOUNS), pick(ADJECTIVES)])].join(', ')}]`,
    );
    if (p.type === 'BigQuery Table')
      lines.push(`resource: https://console.cloud.google.com/bigquery?p=acme&t=${p.slug}`);
    // Bundles written before 2026-08-20 carry bare dates, later ones datetimes (time.ts).
    const when = (month: number, day: number, bare: boolean) =>
      bare
        ? `2026-${pad(month)}-${pad(day)}`
        : `2026-${pad(month)}-${pad(day)}T${pad(Math.floor(random() * 24))}:${pad(Math.floor(random() * 60))}:00Z`;
    const bareEra = chance(0.3);
    const actor = chance(0.6)
      ? 'reference_agent/gemini-2.5-pro'
      : chance(0.5)
        ? `human:${pick(['ahormati', 'jsmith', 'kliu', 'mgarcia'])}`
        : `process:${pick(['nightly-export', 'schema-sync', 'catalog-crawler'])}`;
    lines.push(
      `generated: { by: ${actor}, at: ${when(1 + Math.floor(random() * 9), 1 + Math.floor(random() * 28), bareEra)} }`,
    );
    const verify = random();
    const human = `{ by: human:${pick(['ahormati', 'jsmith', 'kliu'])}, at: ${when(6 + Math.floor(random() * 4), 1 + Math.floor(random() * 28), bareEra)} }`;
    const machine = `{ by: process:${pick(['finance-nightly', 'dq-checks'])}, at: ${when(6 + Math.floor(random() * 4), 1 + Math.floor(random() * 28), bareEra)} }`;
    if (verify < 0.15) lines.push(`verified: ${human}`);
    else if (verify < 0.35) lines.push('verified:', `  - ${machine}`);
    else if (verify < 0.5) lines.push('verified:', `  - ${human}`, `  - ${machine}`);
    const status = random();
    if (status < 0.08) lines.push('status: deprecated');
    else if (status < 0.2) lines.push('status: draft');
    else if (status < 0.6) lines.push('status: stable');
    if (chance(0.35)) {
      // About half in the past (stale now), half ahead.
      const past = chance(0.5);
      lines.push(
        `stale_after: ${past ? when(6 + Math.floor(random() * 4), 1 + Math.floor(random() * 28), bareEra) : `2027-${pad(1 + Math.floor(random() * 12))}-01${bareEra ? '' : 'T00:00:00Z'}`}`,
      );
    }
    const sourceIds: string[] = [];
    const sourceCount = Math.floor(random() * 4);
    if (sourceCount > 0) {
      lines.push('sources:');
      let counted = false;
      for (let s = 0; s < sourceCount; s++) {
        const kind = random();
        const id = `src-${s + 1}`;
        sourceIds.push(id);
        lines.push(`  - id: ${id}`);
        if (kind < 0.4) {
          const other = plan[(i * 31 + s * 97 + 1) % plan.length]!;
          lines.push(`    resource: /${pathOf(other)}`, `    title: ${JSON.stringify(other.title)}`);
        } else if (kind < 0.8) {
          lines.push(
            `    resource: https://wiki.acme.internal/${p.folder.split('-')[0]}/${pick(NOUNS)}-${pick(MEASURES)}`,
            `    title: ${JSON.stringify(`${cap(pick(NOUNS))} ${pick(MEASURES)} notes`)}`,
            `    author: ${chance(0.5) ? 'human:jsmith' : 'process:wiki-export'}`,
          );
        } else {
          counted = true;
          lines.push(
            `    resource: all queries in BigQuery project acme-${p.folder}`,
            `    usage_count: ${Math.floor(random() * 50_000)}`,
          );
        }
        lines.push(
          `    last_modified: ${when(1 + Math.floor(random() * 9), 1 + Math.floor(random() * 28), bareEra)}`,
        );
      }
      if (counted) lines.push(`usage_window: { from: ${when(6, 1, false)}, to: ${when(6, 30, false)} }`);
    }
    if (p.type === 'Attested Computation') {
      const executor =
        playbooks.length > 0 ? `/${pathOf(playbooks[i % playbooks.length]!)}` : '/references/sql-equality.py';
      lines.push(
        'runtime: bigquery',
        'parameters:',
        '  - { name: period_start, type: date, required: true }',
        '  - { name: period_end, type: date, required: true }',
        'executor:',
        `  resource: ${executor}`,
        '  receipt: [job_id, executed_sql, result]',
        'attester:',
        '  resource: /references/sql-equality.py',
      );
    }
    lines.push('---', '');
    lines.push(...body(p, i));
    if (sourceIds.length > 0)
      lines.push('', ...sourceIds.map((id) => `[^${id}]: ${cap(sentence(random, 4))}`));
    const text = `${lines.join('\n')}\n`;
    bytes += Buffer.byteLength(text);
    writeFileSync(join(root, pathOf(p)), text);

    function body(concept: Planned, n: number): string[] {
      const link = () => {
        const other = plan[Math.floor(random() * plan.length)]!;
        // About 1 % of links name a concept nobody wrote yet (a broken link is a warning, §6.1).
        if (chance(0.01)) return `[${other.title}](/${other.folder}/not-written-yet-${n}.md)`;
        return other.folder === concept.folder
          ? `[${other.title}](./${other.slug}.md)`
          : chance(0.5)
            ? `[${other.title}](/${pathOf(other)})`
            : `[${other.title}](../${pathOf(other)})`;
      };
      const paragraph = () => {
        const parts: string[] = [];
        for (let w = 0; w < 40 + Math.floor(random() * 60); w++) {
          // Domain words are common but not in every sentence; the rest is a long-tailed vocabulary, so a
          // query word matches part of the bundle, as in real prose, not all of it.
          parts.push(
            chance(0.03)
              ? link()
              : chance(0.06)
                ? pick(NOUNS)
                : chance(0.04)
                  ? pick(ADJECTIVES)
                  : chance(0.4)
                    ? pick(FILLER)
                    : VOCABULARY[Math.floor(VOCABULARY.length * random() ** 3)]!,
          );
        }
        return `${cap(parts.join(' '))}.`;
      };
      const out = ['# Definition', '', paragraph()];
      if (sourceIds.length > 0) out[2] += ` [^${sourceIds[0]}]`;
      out.push('', `See also ${link()} and ${link()}.`);
      if (concept.type === 'BigQuery Table') {
        out.push('', '# Schema', '', '| Column | Type | Description |', '|---|---|---|');
        for (let c = 0; c < 4 + Math.floor(random() * 8); c++)
          out.push(
            `| \`${pick(NOUNS)}_${pick(['id', 'at', 'usd', 'count'])}\` | ${pick(['STRING', 'INT64', 'NUMERIC', 'TIMESTAMP'])} | ${cap(sentence(random, 6))}. |`,
          );
      }
      if (concept.type === 'Attested Computation')
        out.push(
          '',
          '# Computation',
          '',
          '```sql',
          `SELECT SUM(amount) AS ${concept.slug.replace(/-/g, '_')}`,
          `FROM acme.${pick(NOUNS)}`,
          'WHERE day BETWEEN @period_start AND @period_end',
          '```',
        );
      out.push('', '# Notes', '');
      for (let k = 0; k < 1 + Math.floor(random() * 4); k++) out.push(`- ${paragraph()}`);
      return out;
    }
  });

  // index.md per folder and at the root, as a producer would write them (§8).
  for (const folder of folders) {
    const inFolder = plan.filter((p) => p.folder === folder);
    const lines = [
      '# Concepts',
      '',
      ...inFolder.map((p) => `* [${p.title}](${p.slug}.md) - ${p.description}`),
    ];
    writeFileSync(join(root, folder, 'index.md'), `${lines.join('\n')}\n`);
  }
  writeFileSync(
    join(root, 'index.md'),
    `---\nokf_version: "0.2"\n---\n\n# Subdirectories\n\n${folders.map((f) => `* [${f}](${f}/index.md) - ${f.split('-')[0]} concepts`).join('\n')}\n`,
  );
  return { folders: folders.length, bytes };
}

/** Pronounceable made-up words (`bako`, `remita`, ...) for the long tail of a body's vocabulary. */
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => {
  const syllables = [
    'ba',
    'ko',
    're',
    'mi',
    'ta',
    'lu',
    'se',
    'no',
    'vi',
    'da',
    'pe',
    'gu',
    'fa',
    'zo',
    'hi',
    'ne',
  ];
  let n = i + syllables.length;
  let word = '';
  while (n > 0) {
    word += syllables[n % syllables.length];
    n = Math.floor(n / syllables.length);
  }
  return word;
});

function sentence(random: () => number, words: number): string {
  const all = [...NOUNS, ...ADJECTIVES, ...FILLER];
  return Array.from({ length: words }, () => all[Math.floor(random() * all.length)]!).join(' ');
}

function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

const main = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (main && process.argv[2] === '--cold') {
  const [dir, queries, mode, cacheDir] = process.argv.slice(3) as [string, string, string, string?];
  process.stdout.write(`${JSON.stringify(await coldRun(dir, Number(queries), mode, cacheDir))}\n`);
} else if (main) {
  process.stdout.write(`${JSON.stringify(await runKnowledge(), null, 2)}\n`);
}
