import type { Db } from './database.js';

/** One learned example: a request (`query`) after which a session used `tool` of `server`, at `at` (ISO 8601). */
export interface ToolExample {
  server: string;
  tool: string;
  query: string;
  at: string;
}

/** How many requests are kept per tool: the newest, enough vocabulary without letting one tool dominate. */
const PER_TOOL = 50;

/**
 * Requests that led to a tool: a session searched with these words, then used what it found. Tool search indexes
 * them as the tool's examples, so the words people use find the tool next time even when its description does not
 * contain them. Keyed by server and the server's own tool name, so they survive renames of the model-visible name.
 */
export class ToolExamples {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  record(server: string, tool: string, query: string, at = new Date().toISOString()): void {
    const text = query.trim().slice(0, 500);
    if (!text) return;
    // An imported example keeps its own time; a newer one already kept for the same words wins.
    this.#db
      .prepare(
        'INSERT INTO tool_examples (server, tool, query, at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET at = max(at, excluded.at)',
      )
      .run(server, tool, text, at);
    this.#db
      .prepare(
        'DELETE FROM tool_examples WHERE server = ? AND tool = ? AND query NOT IN (SELECT query FROM tool_examples WHERE server = ? AND tool = ? ORDER BY at DESC LIMIT ?)',
      )
      .run(server, tool, server, tool, PER_TOOL);
  }

  /** Every example with its time, oldest first (what `tack tools examples export` writes). */
  rows(): ToolExample[] {
    return this.#db
      .prepare('SELECT server, tool, query, at FROM tool_examples ORDER BY at, server, tool, query')
      .all() as ToolExample[];
  }

  /** Keeps each example as if recorded at its time (at most the newest 50 per tool stay); in one transaction. */
  import(examples: readonly ToolExample[]): number {
    let kept = 0;
    this.#db.transaction(() => {
      for (const e of examples) {
        this.record(e.server, e.tool, e.query, e.at);
        kept++;
      }
    })();
    return kept;
  }

  /** Every server's examples: `server` -> tool -> requests, newest first. */
  all(): Map<string, Map<string, string[]>> {
    const rows = this.#db
      .prepare('SELECT server, tool, query FROM tool_examples ORDER BY at DESC')
      .all() as Array<{ server: string; tool: string; query: string }>;
    const out = new Map<string, Map<string, string[]>>();
    for (const row of rows) {
      const tools = out.get(row.server) ?? new Map<string, string[]>();
      out.set(row.server, tools);
      const list = tools.get(row.tool) ?? [];
      list.push(row.query);
      tools.set(row.tool, list);
    }
    return out;
  }
}
