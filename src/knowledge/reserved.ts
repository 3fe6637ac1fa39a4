import { readFrontMatter } from '../util/front-matter.js';
import { IssueSink, type KnowledgeIssue } from './issues.js';
import { atxHeading, bodyLinks, codeLines } from './links.js';
import { parseTimeValue } from './time.js';

export const INDEX_FILE = 'index.md';
export const LOG_FILE = 'log.md';

export function isReserved(fileName: string): boolean {
  return fileName === INDEX_FILE || fileName === LOG_FILE;
}

export interface IndexEntry {
  section: string;
  title: string;
  target: string;
  description?: string;
}

/** A directory listing (§8) as read. */
export interface IndexFile {
  path: string;
  okfVersion?: string;
  entries: IndexEntry[];
}

export interface LogEntry {
  date: string;
  line: number;
  items: string[];
}

export interface LogFile {
  path: string;
  entries: LogEntry[];
}

/** An index entry, `* [Title](url) - description`: groups title, target, description. */
export const ENTRY = /^\s*[*+-]\s+\[([^\]]*)\]\(([^)\s]+)\)\s*(?:[-–—:]\s*(.*))?$/;

/**
 * Reads an index.md. Front matter is allowed only at the bundle root and only for `okf_version` (§8, §12):
 * anything else is a conformance error. Lines under headings that are not `* [Title](url) - description`
 * entries are warnings (an index may carry prose, but a consumer cannot list it).
 */
export function parseIndexFile(path: string, text: string): { index: IndexFile; issues: KnowledgeIssue[] } {
  const sink = new IssueSink(path);
  const fm = readFrontMatter(text);
  const index: IndexFile = { path, entries: [] };
  const isRoot = path === INDEX_FILE;
  if (fm.present) {
    for (const p of fm.problems) sink.error('index-front-matter', p.message, p.line);
    const keys = Object.keys(fm.data);
    if (!isRoot && keys.length > 0)
      sink.error('index-front-matter', 'an index.md below the bundle root carries no front matter (§8)', 1);
    for (const key of isRoot ? keys.filter((k) => k !== 'okf_version') : []) {
      sink.error(
        'index-front-matter',
        `\`${key}\`: the root index.md front matter holds only okf_version (§12)`,
        fm.keyLines.get(key),
      );
    }
    if (isRoot && fm.data.okf_version !== undefined) index.okfVersion = String(fm.data.okf_version);
  }
  let section = '';
  const code = codeLines(fm.body);
  fm.body.split('\n').forEach((raw, i) => {
    const line = fm.bodyLine + i;
    if (code[i]) return;
    const heading = atxHeading(raw);
    if (heading) {
      section = heading.text;
      return;
    }
    if (raw.trim() === '') return;
    const entry = ENTRY.exec(raw);
    if (entry) {
      index.entries.push({
        section,
        title: entry[1]!,
        target: entry[2]!,
        ...(entry[3] ? { description: entry[3].trim() } : {}),
      });
    } else if (/^\s*[*+-]\s/.test(raw)) {
      sink.warn('index-entry', 'a list item that is not `* [Title](url) - description`', line);
    }
  });
  if (index.entries.length === 0 && bodyLinks(fm.body).length === 0)
    sink.warn('index-empty', 'index.md lists nothing', 1);
  return { index, issues: sink.issues };
}

/**
 * Reads a log.md (§9): `## YYYY-MM-DD` headings (a MUST, so other date forms are errors), newest first (out of
 * order is a warning). §9 does not forbid front matter, but a log is not a concept: it is read and warned about.
 */
export function parseLogFile(path: string, text: string): { log: LogFile; issues: KnowledgeIssue[] } {
  const sink = new IssueSink(path);
  const fm = readFrontMatter(text);
  if (fm.present) {
    // §9 defines a log by its `## YYYY-MM-DD` headings; front matter, readable or not, is no part of it.
    for (const p of fm.problems)
      sink.warn(
        'log-front-matter',
        `log.md front matter that cannot be read is ignored: ${p.message}`,
        p.line,
      );
    if (fm.problems.length === 0)
      sink.warn(
        'log-front-matter',
        `log.md has front matter (${Object.keys(fm.data).join(', ') || 'empty'}); it is not a concept and the front matter is ignored`,
        1,
      );
  }
  const log: LogFile = { path, entries: [] };
  let current: LogEntry | undefined;
  const code = codeLines(fm.body);
  fm.body.split('\n').forEach((raw, i) => {
    const line = fm.bodyLine + i;
    if (code[i]) return;
    const h2 = atxHeading(raw);
    if (h2?.level === 2 && h2.text !== '') {
      const date = h2.text;
      if (parseTimeValue(date)?.form !== 'date') {
        sink.error('log-date', `log heading "${date}" must be an ISO 8601 date, YYYY-MM-DD (§9)`, line);
        current = undefined;
        return;
      }
      current = { date, line, items: [] };
      log.entries.push(current);
      return;
    }
    const item = /^\s*[*+-]\s+(.*)$/.exec(raw);
    if (item && current) current.items.push(item[1]!);
  });
  for (let i = 1; i < log.entries.length; i++) {
    const [prev, next] = [log.entries[i - 1]!, log.entries[i]!];
    if (next.date > prev.date)
      sink.warn(
        'log-order',
        `## ${next.date} comes after ## ${prev.date}: entries go newest first`,
        next.line,
      );
  }
  return { log, issues: sink.issues };
}
