import { readFileSync, writeFileSync } from 'node:fs';
import { errorMessage, TackError } from '../../errors.js';
import { configuredSemanticRanker } from '../../search/embeddings.js';
import { groupByServer } from '../../search/meta-tools.js';
import { hybridSearch } from '../../search/semantic.js';
import {
  searchableTool,
  serverProfiles,
  type ToolExplanation,
  ToolSearchIndex,
} from '../../search/tool-index.js';
import { openConfiguredStore } from '../../store/open.js';
import type { TackStore } from '../../store/store.js';
import type { ToolExample } from '../../store/tool-examples.js';
import { print, printJson, printJsonLine, table, truncate, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig, type ServerOptions, withHost } from '../with-host.js';

/**
 * `tack tools search "<query>" ["<query>" ...] [--explain]`: the catalog ranked as search_tools ranks it (several
 * queries merged, the semantic ranking fused when tack.json configures it), with scores; `--explain` says which
 * words matched which fields, what query expansion and server evidence added, and each query's own rank.
 */
export async function toolsSearchCommand(
  queries: readonly string[],
  options: ServerOptions & { k?: number; explain?: boolean },
): Promise<number> {
  return withHost(options, options.server ? [options.server] : undefined, async (host, signal, config) => {
    const tools = host.catalog.tools.map((t) => searchableTool(t.name, t.server, t.definition));
    const index = ToolSearchIndex.build(tools, { servers: serverProfiles(host.servers()) });
    const semantic = configuredSemanticRanker(config.toolSearch.embeddings, host.store?.toolEmbeddings, (w) =>
      warn(w.message),
    );
    const result = await hybridSearch(index, tools, queries, options.k ?? 10, semantic, {
      explain: options.explain === true,
      signal,
    });
    const rows = groupByServer(result.hits).map((h) => ({
      name: h.tool.name,
      server: h.tool.server,
      score: Math.round(h.score * 1000) / 1000,
      description: h.tool.description ?? '',
      ...(h.explain ? { explain: h.explain } : {}),
    }));
    if (options.json) {
      printJson(options.explain ? { semantic: result.semantic, tools: rows } : rows);
      return 0;
    }
    if (rows.length === 0) {
      print(`No tool matches ${queries.map((q) => `"${q}"`).join(', ')}.`);
      return 0;
    }
    if (!options.explain) {
      print(
        table(
          ['SCORE', 'TOOL', 'DESCRIPTION'],
          rows.map((r) => [r.score.toFixed(3), r.name, truncate(r.description, 70)]),
        ),
      );
      return 0;
    }
    for (const r of rows) {
      print(`${r.score.toFixed(3)}  ${r.name}  (server ${r.server})`);
      for (const line of explainLines(r.explain)) print(`    ${line}`);
    }
    print(`\nsemantic ranking: ${result.semantic}`);
    return 0;
  });
}

/** An explanation as lines: `matched: forecast (name, description), city (params)` and the rest. */
export function explainLines(explain: ToolExplanation | undefined): string[] {
  if (!explain) return [];
  const lines = [
    `matched: ${explain.terms.map((t) => `${t.term} (${t.fields.join(', ')})`).join(', ') || 'no query word'}`,
  ];
  if (explain.expansion.length > 0) lines.push(`expansion: ${explain.expansion.join(', ')}`);
  if (explain.server > 0) lines.push(`server evidence: +${explain.server}`);
  if (explain.ranks.length > 0)
    lines.push(`ranks: ${explain.ranks.map((r) => `${r.rank} for "${truncate(r.query, 40)}"`).join('; ')}`);
  return lines;
}

async function withStore<T>(options: GlobalOptions, fn: (store: TackStore) => Promise<T>): Promise<T> {
  const store = await openConfiguredStore(await loadCliConfig(options));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * `tack tools examples export [file]`: the learned examples (requests after which a tool was used) as JSONL, one
 * `{"server", "tool", "query", "at"}` per line, to stdout without a file; shareable with a team.
 */
export function toolsExamplesExportCommand(
  file: string | undefined,
  options: GlobalOptions,
): Promise<number> {
  return withStore(options, async (store) => {
    const rows = await store.toolExamples.rows();
    if (file === undefined || file === '-') for (const row of rows) printJsonLine(row);
    else {
      writeFileSync(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
      if (!options.json) print(`${rows.length} examples written to ${file}`);
    }
    if (options.json && file !== undefined && file !== '-') printJson({ exported: rows.length, file });
    return 0;
  });
}

/**
 * `tack tools examples import <file>`: examples from a JSONL export (`-`: stdin) kept as if recorded at their
 * time; every line is checked before any is kept, and a bad one is named by its line number.
 */
export function toolsExamplesImportCommand(file: string, options: GlobalOptions): Promise<number> {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new TackError('USAGE', `cannot read ${file}: ${errorMessage(error)}`, { subject: { file } });
  }
  const examples: ToolExample[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const bad = (why: string) =>
      new TackError('USAGE', `${file}:${i + 1}: ${why}`, {
        subject: { file },
        hint: 'Each line is {"server": "...", "tool": "...", "query": "...", "at": "<ISO 8601>"}, as `tack tools examples export` writes.',
      });
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch (error) {
      throw bad(`not valid JSON (${errorMessage(error)})`);
    }
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw bad('expected an object');
    const record = entry as Record<string, unknown>;
    for (const key of ['server', 'tool', 'query'] as const)
      if (typeof record[key] !== 'string' || (record[key] as string).trim() === '')
        throw bad(`"${key}" must be a non-empty string`);
    const at = record.at ?? new Date().toISOString();
    if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) throw bad('"at" must be an ISO 8601 time');
    examples.push({
      server: record.server as string,
      tool: record.tool as string,
      query: record.query as string,
      at: new Date(at).toISOString(),
    });
  });
  return withStore(options, async (store) => {
    const count = await store.toolExamples.import(examples);
    if (options.json) printJson({ imported: count });
    else print(`${count} examples imported`);
    return 0;
  });
}
