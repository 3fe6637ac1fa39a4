/**
 * tack's warnings: what a caller should hear about that does not stop the work (a store that would not open, a
 * project whose servers wait for `tack trust`, a tool definition held back). The objects that can warn take an
 * `onWarning` sink; without one they stay silent, so a library never writes into its caller's output. The CLI
 * passes one that prints on stderr.
 */

export type TackWarningCode =
  /** The SQLite store could not open: tack goes on without era caching, pins or the audit log. */
  | 'STORE_DISABLED'
  /** The project's servers, hooks, allow rules or skills are held back until it is trusted. */
  | 'PROJECT_UNTRUSTED'
  /** A tool or prompt definition changed since it was pinned, or the scanner flagged it: it is not offered. */
  | 'DEFINITION_HELD'
  /** Tool search's embeddings endpoint cannot be reached: search_tools ranks lexically until it answers. */
  | 'SEMANTIC_SEARCH_UNAVAILABLE'
  /** A call's audit row could not be written (disk full, the PostgreSQL store down): the call itself went on. */
  | 'AUDIT_FAILED'
  /** The PostgreSQL store did not take audit rows: they are kept in a local spool and written when it answers. */
  | 'AUDIT_SPOOLED'
  /** Rows from the local audit spool were written to the PostgreSQL store: what AUDIT_SPOOLED kept is safe again. */
  | 'AUDIT_RECOVERED'

  /** A kept index (knowledge, tool search) could not be used or written: it is rebuilt, which takes longer. */
  | 'INDEX_CACHE';

/** Something tack went on despite: a code, a message, the server it is about. */
export interface TackWarning {
  code: TackWarningCode;
  /** One readable line; it names what to do when there is something to do. */
  message: string;
  /** The server concerned, when there is one. */
  server?: string;
}

/** Where warnings go; without one they are silent. */
export type WarningSink = (warning: TackWarning) => void;

/** Hands `warning` to `sink`, if any. A sink that throws is the caller's bug: it never breaks the work. */
export function sendWarning(sink: WarningSink | undefined, warning: TackWarning): void {
  if (!sink) return;
  try {
    sink(warning);
  } catch {}
}
