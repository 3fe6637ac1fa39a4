import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Document, isMap, isScalar, isSeq, visit } from 'yaml';
import { TackError } from '../errors.js';
import { readFrontMatter } from '../util/front-matter.js';
import type { Actor, Concept } from './concept.js';
import { okfNow, parseTimeValue } from './time.js';
import { actorKind } from './trust-tier.js';

/**
 * Changes top-level front matter keys of a concept in place. Only the changed keys' lines are rewritten; every
 * other byte of the file stays as it was, so unknown keys, comments, quoting and flow style round-trip unchanged
 * (spec §4.1: consumers SHOULD preserve unknown keys). Re-stringifying the whole YAML document would not: the
 * `yaml` package reformats flow lists and sequence indentation (27 of 28 real bundle files changed when tried).
 * `undefined` deletes a key; a new key goes last.
 */
export function setFrontMatter(text: string, updates: Readonly<Record<string, unknown>>): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const bom = text.startsWith('\uFEFF') ? '\uFEFF' : '';
  const lines = text.slice(bom.length).split(/\r?\n/);
  const fm = readFrontMatter(text);
  if (!fm.present || fm.problems.length > 0)
    throw new TackError('KNOWLEDGE_BUNDLE', 'the file has no readable front matter to change', {
      hint: 'tack knowledge lint shows what is wrong with it.',
    });
  const close = fm.bodyLine - 2; // 0-based index of the closing `---`
  const starts = [...fm.keyLines.values()].map((l) => l - 1).sort((a, b) => a - b);
  const blockOf = (key: string): [number, number] | undefined => {
    const line = fm.keyLines.get(key);
    if (line === undefined) return undefined;
    const start = line - 1;
    let end = starts.find((s) => s > start) ?? close;
    // Comments and blank lines just before the next key belong to it, not to this one.
    while (end - 1 > start && /^\s*(#.*)?$/.test(lines[end - 1]!)) end--;
    return [start, end];
  };
  const edits: Array<{ start: number; end: number; lines: string[] }> = [];
  for (const [key, value] of Object.entries(updates)) {
    const block = blockOf(key);
    const replacement = value === undefined ? [] : yamlLines(key, value);
    if (block) edits.push({ start: block[0], end: block[1], lines: replacement });
    else if (value !== undefined) edits.push({ start: close, end: close, lines: replacement });
  }
  // Apply from the bottom so earlier line numbers stay valid; insertions at `close` keep their given order.
  edits
    .map((e, i) => ({ ...e, i }))
    .sort((a, b) => b.start - a.start || b.i - a.i)
    .forEach((e) => {
      lines.splice(e.start, e.end - e.start, ...e.lines);
    });
  return bom + lines.join(eol);
}

/** `key: value` as YAML lines: short mappings in flow style (`{ by: x, at: y }`), as OKF's examples write them. */
function yamlLines(key: string, value: unknown): string[] {
  const doc = new Document({ [key]: value });
  visit(doc, {
    Map(_, node, path) {
      if (path.length > 2 && node.items.every((p) => isScalar(p.value))) node.flow = true;
    },
    Seq(_, node, path) {
      if (path.length > 2 && node.items.every((i) => isScalar(i))) node.flow = true;
      if (isMap(doc.contents) && isSeq(node) && path.length <= 2) node.flow = false;
    },
  });
  return doc
    .toString({ lineWidth: 0, flowCollectionPadding: true, indentSeq: true })
    .replace(/\n$/, '')
    .split('\n');
}

/**
 * Records a verification event (§5.2) on a concept's file: appends `{ by, at }` to `verified` (a bare mapping
 * becomes a list), leaving the rest of the file as it was. `by` must be an actor (human:<id>, process:<id>,
 * <tool>/<version>); a human actor is what makes the concept human-reviewed.
 */
export async function recordVerification(
  root: string,
  concept: Concept,
  event: { by: string; at?: string },
): Promise<Actor[]> {
  const kind = actorKind(event.by);
  if (kind === 'unknown' || kind === 'team')
    throw new TackError('USAGE', `"${event.by}" is not an actor that can verify`, {
      hint: 'Use human:<id> for a person, process:<id> for an automated check, or <tool>/<version>.',
    });
  const at = event.at?.trim() ?? okfNow();
  const form = parseTimeValue(at)?.form;
  // A verification time the loader could not read would make "how recently" (§5.2) unanswerable.
  if (form !== 'datetime' && form !== 'date')
    throw new TackError('USAGE', `"${event.at}" is not a time a verification can carry`, {
      hint:
        form === 'datetime-without-offset'
          ? 'Add the UTC offset, e.g. 2026-11-30T10:00:00Z.'
          : 'Use an ISO 8601 datetime with its offset, e.g. 2026-11-30T10:00:00Z (or a bare date, 2026-11-30).',
    });
  const file = join(root, concept.path);
  const text = await readFile(file, 'utf8');
  const current = readFrontMatter(text).data.verified;
  const list = current === undefined || current === null ? [] : Array.isArray(current) ? current : [current];
  const next = [...list, { by: event.by, at }];
  await writeFile(file, setFrontMatter(text, { verified: next }));
  return next.map((v) => v as Actor);
}
