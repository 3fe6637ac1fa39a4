import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KnowledgeBundle } from './bundle.js';
import type { Concept } from './concept.js';
import { encodePath } from './paths.js';
import { INDEX_FILE } from './reserved.js';

/**
 * index.md files for progressive disclosure (§8): one per folder that holds concepts or subfolders with
 * concepts. Concepts are grouped in sections per type (sorted), each entry `* [Title](file.md) - description`;
 * subfolders come under `# Subdirectories` with a description taken from their own index (the first entry's
 * section line) or a count of what they hold. The root index keeps an existing `okf_version` front matter.
 */
export function renderIndexes(bundle: KnowledgeBundle): Map<string, string> {
  const byFolder = new Map<string, Concept[]>();
  const folders = new Set<string>(['']);
  for (const concept of bundle.concepts.values()) {
    const folder = parentOf(concept.path);
    const list = byFolder.get(folder) ?? [];
    list.push(concept);
    byFolder.set(folder, list);
    for (let f = folder; f !== ''; f = parentOf(f)) folders.add(f);
  }
  const children = new Map<string, string[]>();
  for (const folder of folders) {
    if (folder === '') continue;
    const parent = parentOf(folder);
    children.set(parent, [...(children.get(parent) ?? []), folder]);
  }
  const countBelow = (folder: string): number =>
    (byFolder.get(folder)?.length ?? 0) + (children.get(folder) ?? []).reduce((n, f) => n + countBelow(f), 0);

  const out = new Map<string, string>();
  for (const folder of [...folders].sort()) {
    const parts: string[] = [];
    if (folder === '') {
      const version = rootVersion(bundle);
      if (version !== undefined) parts.push(`---\nokf_version: ${JSON.stringify(version)}\n---\n`);
    }
    const concepts = byFolder.get(folder) ?? [];
    const types = [...new Set(concepts.map((c) => c.type))].sort((a, b) => a.localeCompare(b));
    for (const type of types) {
      parts.push(`# ${type}\n`);
      for (const c of concepts
        .filter((x) => x.type === type)
        .sort((a, b) => a.title.localeCompare(b.title))) {
        parts.push(entry(c.title, fileName(c.path), c.description));
      }
      parts.push('');
    }
    const subfolders = (children.get(folder) ?? []).sort();
    if (subfolders.length > 0) {
      parts.push('# Subdirectories\n');
      for (const sub of subfolders) {
        const name = sub.split('/').pop()!;
        const described = bundle.indexes.get(sub)?.entries.find((e) => e.description)?.section;
        const n = countBelow(sub);
        parts.push(
          entry(name, `${name}/${INDEX_FILE}`, described ? `${described}; ${n} concepts` : `${n} concepts`),
        );
      }
      parts.push('');
    }
    out.set(folder === '' ? INDEX_FILE : `${folder}/${INDEX_FILE}`, `${parts.join('\n').trimEnd()}\n`);
  }
  return out;
}

/** Writes every index.md renderIndexes makes; returns the paths written (bundle-relative). */
export async function writeIndexes(bundle: KnowledgeBundle): Promise<string[]> {
  const files = renderIndexes(bundle);
  await Promise.all([...files].map(([path, text]) => writeFile(join(bundle.root, path), text)));
  return [...files.keys()];
}

function entry(title: string, target: string, description: string | undefined): string {
  const safe = title.replace(/[[\]]/g, '');
  const oneLine = description?.replace(/\s+/g, ' ').trim();
  return `* [${safe}](${encodePath(target)})${oneLine ? ` - ${oneLine}` : ''}`;
}

function rootVersion(bundle: KnowledgeBundle): string | undefined {
  const existing = bundle.indexes.get('');
  if (existing?.okfVersion !== undefined) return existing.okfVersion;
  return undefined;
}

function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut === -1 ? '' : path.slice(0, cut);
}

function fileName(path: string): string {
  return path.split('/').pop()!;
}
