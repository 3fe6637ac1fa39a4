/**
 * What `tack knowledge lint` reports. Errors are the spec's conformance failures (§11): unparseable front matter,
 * a missing or empty `type`, a reserved file that breaks its rules. Everything else is a warning, since a
 * consumer MUST NOT reject unknown types or keys, missing optional fields, broken links or missing indexes.
 * Codes are stable and listed in docs/knowledge.md.
 */
export type KnowledgeSeverity = 'error' | 'warning';

/** A problem found in a bundle's file: an error leaves the file out, a warning does not. */
export interface KnowledgeIssue {
  severity: KnowledgeSeverity;
  code: string;
  /** Bundle-relative path, `/` separated. */
  file: string;
  /** 1-based line in the file, when one can be named. */
  line?: number;
  message: string;
}

/** An issue as one line: `file:line: severity: message`, with the bundle's name when given. */
export function formatKnowledgeIssue(issue: KnowledgeIssue, bundle?: string): string {
  const where = `${bundle ? `${bundle}/` : ''}${issue.file}${issue.line ? `:${issue.line}` : ''}`;
  return `${where}: ${issue.severity} ${issue.code}: ${issue.message}`;
}

/** Collects issues for one file, so a parser can report with a line and not repeat the file name. */
export class IssueSink {
  readonly issues: KnowledgeIssue[] = [];
  constructor(readonly file: string) {}
  error(code: string, message: string, line?: number): void {
    this.issues.push({ severity: 'error', code, file: this.file, message, ...(line ? { line } : {}) });
  }
  warn(code: string, message: string, line?: number): void {
    this.issues.push({ severity: 'warning', code, file: this.file, message, ...(line ? { line } : {}) });
  }
}
