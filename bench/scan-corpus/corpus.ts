import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScannableDefinition } from '../../src/security/catalog.js';
import { repoRoot } from '../util.js';

/**
 * The labelled corpus of published tool definitions (issue 15): public data from other projects, never committed
 * here. Read from `TACK_SCAN_CORPUS`, else `../corpus15/corpus.jsonl` beside the checkout, else
 * `/work/corpus15/corpus.jsonl`; when none is there the benchmark says so and is skipped.
 */
export function corpusPath(): string | undefined {
  const candidates = [
    process.env.TACK_SCAN_CORPUS,
    join(repoRoot, '../corpus15/corpus.jsonl'),
    '/work/corpus15/corpus.jsonl',
  ].filter((p): p is string => Boolean(p));
  return candidates.find((p) => existsSync(p));
}

export interface CorpusItem {
  id: string;
  source: string;
  /** Leave-one-source-out holds out a whole group: two sources of one origin are one group. */
  group: string;
  label: 'benign' | 'poisoned';
  /** The primary class of a poisoned item; `benign` for the rest. */
  class: string;
  /** Every class of a poisoned item (multi-label), the primary first. */
  classes: string[];
  definition: ScannableDefinition;
  /** The length of the description (the long-description false-positive target counts those of 200+). */
  descriptionChars: number;
  /** The corpus's note on how the item was made (MPMA variants: DPMA name, DPMA description, GAPMA). */
  note: string;
}

interface Row {
  id: string;
  source: string;
  source_group: string;
  label: 'benign' | 'poisoned';
  class: string | null;
  classes?: string[];
  kind?: string;
  server: string;
  text_withheld?: boolean;
  note?: string;
  tool: Record<string, unknown>;
}

/** Items whose text is withheld (no licence) cannot be scored and are left out; `withheld` counts them. */
export function loadCorpus(file: string): { items: CorpusItem[]; withheld: number } {
  const items: CorpusItem[] = [];
  let withheld = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as Row;
    if (row.text_withheld) {
      withheld++;
      continue;
    }
    const tool = row.tool;
    const other = (tool._other_fields ?? {}) as Record<string, unknown>;
    const definition: ScannableDefinition = {
      kind: row.kind === 'prompt' ? 'prompt' : 'tool',
      server: row.server,
      name: String(tool.name),
      ...(typeof tool.title === 'string' ? { title: tool.title } : {}),
      ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
      ...(tool.inputSchema !== undefined || other.parameters !== undefined
        ? { inputSchema: tool.inputSchema ?? other.parameters }
        : {}),
      ...(tool.outputSchema !== undefined || other.outputSchema !== undefined
        ? { outputSchema: tool.outputSchema ?? other.outputSchema }
        : {}),
      ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
      ...(tool.arguments !== undefined ? { arguments: tool.arguments } : {}),
    };
    const primary = row.class ?? 'benign';
    items.push({
      id: row.id,
      source: row.source,
      group: row.source_group,
      label: row.label,
      class: primary,
      classes: [primary, ...(row.classes ?? []).filter((c) => c !== primary)],
      definition,
      descriptionChars: (definition.description ?? '').length,
      note: row.note ?? '',
    });
  }
  return { items, withheld };
}
